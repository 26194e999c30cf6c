//=============================================================================
//  serialkit — label every note of the open score with its row form and order position
//
//  MuseScore 3 plugin. Exports the open score to MusicXML, runs
//  `serialkit annotate SCORE --report REPORT`, and applies each notehead's label ("P0:3")
//  and colour from the report's "noteheads" list to the open score, matching notes by
//  (part, staff, voice, tick, pitch) because MuseScore drops note ids on export.
//
//  Settings (File > Score Properties, custom tags):
//    serialkit-row         the row, e.g. "C B G Ab Eb Db D Bb F# F E A" or "webern-op21"
//                          (empty: $SERIALKIT_ROW, else serialkit identifies the row)
//    serialkit-convention  "relative" (default) or "absolute"
//  If `serialkit` is not on MuseScore's PATH, set `serialkitCommand` below to its full path.
//
//  Headless: QT_QPA_PLATFORM=offscreen SERIALKIT_MUSESCORE_SAVE=out.mscx \
//            mscore3 -p serialkit.qml SCORE   (saves the labelled score, then quits)
//=============================================================================

import QtQuick 2.0
import QtQuick.Dialogs 1.2
import MuseScore 3.0
import FileIO 3.0

MuseScore {
    id: plugin
    menuPath: "Plugins.serialkit.Label Row Forms"
    version: "0.1.0"
    description: "Label every note with its twelve-tone row form and order position (serialkit)"
    requiresScore: true

    // Full path to the serialkit program if it is not on MuseScore's PATH.
    property string serialkitCommand: "serialkit"
    // A label this plugin wrote earlier (removed before labelling again).
    property var labelPattern: /^(P|I|R|RI)\d+:\d+(\/(P|I|R|RI)\d+:\d+)*$/

    QProcess { id: proc }
    QProcess { id: envProc }
    FileIO { id: scoreFile }
    FileIO { id: reportFile }

    MessageDialog {
        id: messageDialog
        title: "serialkit"
        text: ""
        onAccepted: Qt.quit()
    }

    function headless() {
        var args = Qt.application.arguments;
        for (var i = 0; i < args.length; i++)
            if (args[i] === "-p" || args[i] === "--plugin")
                return true;
        return false;
    }

    function finish(message, failed) {
        console.log("serialkit: " + message);
        if (headless()) {
            Qt.quit();
            return;
        }
        messageDialog.icon = failed ? StandardIcon.Warning : StandardIcon.Information;
        messageDialog.text = message;
        messageDialog.open();
    }

    function posix() {
        return Qt.platform.os !== "windows";
    }

    // A command-line argument for QProcess.start (which splits on spaces outside double quotes).
    function quote(text) {
        return "\"" + String(text).replace(/"/g, "\"\"\"") + "\"";
    }

    // A word for the POSIX shell.
    function shellWord(text) {
        return "'" + String(text).replace(/'/g, "'\\''") + "'";
    }

    // The value of an environment variable; "" when unset (QML cannot read the environment,
    // so ask printenv; on Windows the variables are not read).
    function envValue(name) {
        if (!posix())
            return "";
        envProc.start("printenv " + name);
        if (!envProc.waitForFinished(10000))
            return "";
        return String(envProc.readAllStandardOutput()).replace(/[\r\n]+$/, "");
    }

    // The words of the serialkit command line.
    function annotateWords(scorePath, reportPath) {
        var words = [serialkitCommand, "annotate", scorePath, "--report", reportPath];
        var row = curScore.metaTag("serialkit-row") || envValue("SERIALKIT_ROW");
        if (row)
            words.push("--row", row);
        else
            words.push("--identify");
        var convention = curScore.metaTag("serialkit-convention");
        if (convention)
            words.push("--convention", convention);
        return words;
    }

    // Run `serialkit annotate` on the exported score; returns the parsed report or throws a
    // message. On POSIX systems it runs through sh so that serialkit's error messages (stderr)
    // reach the plugin, whose QProcess reads standard output only.
    function runSerialkit(scorePath, reportPath) {
        var words = annotateWords(scorePath, reportPath);
        var command;
        if (posix())
            command = "/bin/sh -c " + quote("exec " + words.map(shellWord).join(" ") + " 2>&1");
        else
            command = words.map(quote).join(" ");
        console.log("serialkit: running " + command);
        var started = Date.now();
        proc.start(command);
        var finished = proc.waitForFinished(120000);
        var output = String(proc.readAllStandardOutput()).trim();
        if (!finished && Date.now() - started >= 110000)
            throw "serialkit did not finish within two minutes (command: " + command + ")";
        reportFile.source = reportPath;
        if (reportFile.exists())
            return JSON.parse(reportFile.read());
        if (!finished || /not found|No such file|cannot execute/i.test(output))
            throw "could not run serialkit: is it installed and on MuseScore's PATH? "
                  + "(or set serialkitCommand in serialkit.qml; command: " + command + ")\n" + output;
        var errors = output.split("\n").filter(function (line) { return /^error: /.test(line); });
        throw errors.length ? errors.join("\n").replace(/^error: /gm, "")
                            : "serialkit wrote no report (command: " + command + ")\n" + output;
    }

    // MuseScore voice 0-3: its MusicXML export numbers voices 1-4 on staff 1, 5-8 on staff 2...
    function museScoreVoice(voice) {
        var v = parseInt(voice, 10);
        return isNaN(v) || v < 1 ? 0 : (v - 1) % 4;
    }

    function keyOf(part, staff, tick, pitch, grace) {
        return part + "/" + staff + "/" + tick + "/" + pitch + (grace ? "/g" : "");
    }

    function indexNotes(notes) {
        var index = {};
        for (var i = 0; i < notes.length; i++) {
            var n = notes[i];
            var key = keyOf(n.part_index, n.staff, n.tick, n.midi, n.grace);
            if (!index[key])
                index[key] = [];
            index[key].push({ entry: n, voice: museScoreVoice(n.voice), used: false });
        }
        return index;
    }

    // The unused entry for this notehead: same voice first, then any voice; ticks may differ
    // by one where tuplets do not divide 480 evenly; last, the same pitch class in another
    // octave (an ottava line the exported file spells differently).
    function take(index, part, staff, voice, tick, pitch, grace) {
        var ticks = [tick, tick - 1, tick + 1];
        var pitches = [[pitch], [pitch - 12, pitch + 12, pitch - 24, pitch + 24]];
        for (var round = 0; round < pitches.length; round++) {
            for (var pass = 0; pass < 2; pass++) {
                for (var t = 0; t < ticks.length; t++) {
                    for (var p = 0; p < pitches[round].length; p++) {
                        var key = keyOf(part, staff, ticks[t], pitches[round][p], grace);
                        var list = index[key] || [];
                        for (var i = 0; i < list.length; i++) {
                            if (!list[i].used && (pass === 1 || list[i].voice === voice)) {
                                list[i].used = true;
                                return list[i].entry;
                            }
                        }
                    }
                }
            }
        }
        return null;
    }

    function removeOldLabels(chord) {
        for (var i = 0; i < chord.notes.length; i++) {
            var els = chord.notes[i].elements;
            for (var j = els.length - 1; j >= 0; j--)
                if (els[j].type === Element.FINGERING && labelPattern.test(els[j].text))
                    removeElement(els[j]);
        }
        var lyrics = chord.lyrics;
        for (var k = lyrics.length - 1; k >= 0; k--)
            if (labelPattern.test(lyrics[k].text))
                removeElement(lyrics[k]);
    }

    // Label the noteheads of one chord: a fingering per note (MuseScore >= 3.3.3, whose Note
    // has add()), else lyric lines on `host` (the chord, or for a grace chord its main chord,
    // since grace notes cannot carry lyrics): line verseBase + i for the chord's i-th note from
    // the bottom. Returns how many lyric lines it used.
    function labelChord(chord, host, verseBase, index, where, voice, tick, grace, stats) {
        for (var i = 0; i < chord.notes.length; i++) {
            var note = chord.notes[i];
            if (note.tieBack) {  // a tie continuation takes the colour of its first note
                note.color = note.firstTiedNote.color;
                continue;
            }
            var entry = take(index, where.index, where.staff, voice, tick, note.pitch, grace);
            if (!entry) {
                stats.unmatched++;
                continue;
            }
            note.color = entry.color;
            stats.coloured++;
            if (!entry.label)
                continue;  // unexplained, or a tied continuation: colour only
            if (typeof note.add === "function") {
                var fingering = newElement(Element.FINGERING);
                fingering.text = entry.label;
                note.add(fingering);
            } else {
                var lyric = newElement(Element.LYRICS);
                lyric.text = entry.label;
                lyric.verse = verseBase + i;
                host.add(lyric);
            }
            stats.labelled++;
        }
        return chord.notes.length;
    }

    // A chord and its grace notes: lyric lines go main notes first, then grace notes in order.
    function labelChordWithGraces(el, index, where, voice, tick, stats) {
        var graces = el.graceNotes;
        removeOldLabels(el);
        for (var g = 0; g < graces.length; g++)
            removeOldLabels(graces[g]);
        var verse = labelChord(el, el, 0, index, where, voice, tick, false, stats);
        for (g = 0; g < graces.length; g++)
            verse += labelChord(graces[g], el, verse, index, where, voice, tick, true, stats);
    }

    function partOfStaff(staffIdx) {
        var parts = curScore.parts;
        for (var p = 0; p < parts.length; p++)
            if (staffIdx * 4 >= parts[p].startTrack && staffIdx * 4 < parts[p].endTrack)
                return { index: p, staff: staffIdx - parts[p].startTrack / 4 + 1 };
        return { index: 0, staff: staffIdx + 1 };
    }

    function applyLabels(report) {
        var index = indexNotes(report.noteheads);
        var stats = { labelled: 0, coloured: 0, unmatched: 0 };
        var cursor = curScore.newCursor();
        curScore.startCmd();
        for (var staffIdx = 0; staffIdx < curScore.nstaves; staffIdx++) {
            var where = partOfStaff(staffIdx);
            for (var voice = 0; voice < 4; voice++) {
                cursor.staffIdx = staffIdx;
                cursor.voice = voice;
                cursor.rewind(0);
                while (cursor.segment) {
                    var el = cursor.element;
                    if (el && el.type === Element.CHORD)
                        labelChordWithGraces(el, index, where, voice, cursor.tick, stats);
                    cursor.next();
                }
            }
        }
        curScore.endCmd();
        return stats;
    }

    function saveExtension(path) {
        var dot = path.lastIndexOf(".");
        return dot < 0 ? "mscx" : path.substring(dot + 1);
    }

    onRun: {
        if (!curScore) {
            finish("open a score first", true);
            return;
        }
        var stamp = Date.now();
        var scorePath = scoreFile.tempPath() + "/serialkit-musescore-" + stamp + ".musicxml";
        var reportPath = scoreFile.tempPath() + "/serialkit-musescore-" + stamp + ".json";
        if (!writeScore(curScore, scorePath, "musicxml")) {
            finish("could not export the score to " + scorePath, true);
            return;
        }
        var report;
        try {
            report = runSerialkit(scorePath, reportPath);
        } catch (message) {
            finish(String(message), true);
            return;
        } finally {
            scoreFile.source = scorePath;
            scoreFile.remove();
            reportFile.source = reportPath;
            if (reportFile.exists())
                reportFile.remove();
        }
        var stats = applyLabels(report);
        var summary = "labelled " + stats.labelled + " of " + report.events + " notes ("
                      + report.unexplained.length + " unexplained, " + stats.unmatched
                      + " not found in the score)";
        var saveTo = envValue("SERIALKIT_MUSESCORE_SAVE");
        if (saveTo) {
            if (!writeScore(curScore, saveTo, saveExtension(saveTo))) {
                finish("could not save the labelled score to " + saveTo, true);
                return;
            }
            summary += "; saved to " + saveTo;
        }
        finish(summary, false);
    }
}
