// serialkit review page: select a finding to highlight its notes; select a note to inspect it.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("sk-data").textContent);
  var findings = data.findings || [];
  var notes = data.notes || {};
  var current = -1;

  // A long score's pages wait as SVG text in script data blocks (or in template elements) inside
  // placeholders of their size: a page is instantiated when it nears the visible part of
  // #sk-main, or when a selection needs it.
  var main = document.getElementById("sk-main");
  var observer = null;

  function held(page) {
    return page.querySelector(':scope > script[type="text/x-sk-page"], :scope > template');
  }

  function instantiate(page) {
    var h = held(page);
    if (!h) { return; }
    if (observer) { observer.unobserve(page); }
    if (h.tagName === "TEMPLATE") {
      page.replaceChild(h.content, h);
    } else {
      var text = h.textContent;
      page.removeChild(h);
      page.insertAdjacentHTML("beforeend", text);
    }
    page.classList.remove("sk-lazy");
    page.style.removeProperty("aspect-ratio");
    page.setAttribute("data-loaded", "1");
  }

  function attrText(value) {
    return String(value).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function holds(h, attr, value) {
    // Does a waiting page hold an element whose attribute attr is value?
    if (h.tagName === "TEMPLATE") {
      return h.content.querySelector("[" + attr + '="' + CSS.escape(String(value)) + '"]') !== null;
    }
    return h.textContent.indexOf(" " + attr + '="' + attrText(value) + '"') >= 0;
  }

  function loadWhere(attr, value) {
    // Instantiate every waiting page that holds an element with that attribute value.
    var hit = false;
    document.querySelectorAll(".sk-page.sk-lazy").forEach(function (page) {
      var h = held(page);
      if (h && holds(h, attr, value)) { instantiate(page); hit = true; }
    });
    return hit;
  }

  function noteEl(id) {
    var el = document.getElementById(id);
    if (!el && loadWhere("id", id)) { el = document.getElementById(id); }
    return el && el.closest ? el : null;
  }

  var waiting = document.querySelectorAll(".sk-page.sk-lazy");
  if (waiting.length && "IntersectionObserver" in window) {
    observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) { if (e.isIntersecting) { instantiate(e.target); } });
    }, { root: main, rootMargin: "100% 0px" });
    waiting.forEach(function (page) { observer.observe(page); });
  } else {
    waiting.forEach(instantiate);
  }
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll(".sk-page.sk-lazy").forEach(instantiate);
  });

  function clear() {
    document.querySelectorAll(".sk-halo").forEach(function (h) { h.remove(); });
    document.querySelectorAll(".sk-hl").forEach(function (e) { e.classList.remove("sk-hl"); });
    document.querySelectorAll(".sk-finding.sk-active").forEach(function (e) { e.classList.remove("sk-active"); });
  }

  function halo(el) {
    var layer = el.closest("g.page-margin");
    if (!layer || !el.getBBox) { return; }
    var b = el.getBBox();
    var pad = 90;
    var r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    r.setAttribute("class", "sk-halo");
    r.setAttribute("x", b.x - pad); r.setAttribute("y", b.y - pad);
    r.setAttribute("width", b.width + 2 * pad); r.setAttribute("height", b.height + 2 * pad);
    r.setAttribute("rx", 60);
    layer.insertBefore(r, layer.firstChild);
  }

  function highlight(ids) {
    var first = null;
    ids.forEach(function (id) {
      var el = noteEl(id);
      if (!el) { return; }
      el.classList.add("sk-hl");
      halo(el);
      if (!first) { first = el; }
    });
    document.body.setAttribute("data-highlighted", ids.filter(function (id) { return noteEl(id); }).join(" "));
    return first;
  }

  function selectFinding(index, scroll) {
    var f = findings[index];
    if (!f) { return; }
    clear();
    current = index;
    var button = document.querySelector('.sk-finding[data-index="' + index + '"]');
    if (button) {
      button.classList.add("sk-active");
      if (scroll !== false && button.scrollIntoView) { button.scrollIntoView({ block: "nearest" }); }
    }
    loadWhere("data-finding", index);
    document.querySelectorAll('rect.sk-box[data-finding="' + index + '"]').forEach(function (b) { b.classList.add("sk-hl"); });
    var first = highlight(f.event_ids);
    document.body.setAttribute("data-finding", String(index));
    if (f.event_ids.length) { showNote(f.event_ids[0]); }
    if (first && scroll !== false) { first.scrollIntoView({ block: "center", inline: "center" }); }
    if (history.replaceState) { history.replaceState(null, "", "#finding=" + index); }
  }

  function row(table, key, value) {
    var tr = document.createElement("tr");
    var th = document.createElement("th"); th.textContent = key;
    var td = document.createElement("td"); td.textContent = value;
    tr.appendChild(th); tr.appendChild(td); table.appendChild(tr);
  }

  function showNote(id) {
    var box = document.getElementById("sk-note");
    if (!box) { return; }
    box.textContent = "";
    var info = notes[id] || {};
    var table = document.createElement("table");
    row(table, "note", id);
    row(table, "label", info.label || (info.unexplained ? "unexplained" : "—"));
    if (info.aliases && info.aliases.length) { row(table, "also", info.aliases.join(", ")); }
    var mine = findings.filter(function (f) { return f.event_ids.indexOf(id) >= 0; });
    mine.forEach(function (f) { row(table, f.code, (f.location ? f.location + ": " : "") + f.message); });
    if (info.rung) { row(table, "repair", info.rung); }
    if (info.certificate) {
      Object.keys(info.certificate).forEach(function (k) {
        var v = info.certificate[k];
        row(table, "cert." + k, typeof v === "object" ? JSON.stringify(v) : String(v));
      });
    } else {
      row(table, "certificate", "none");
    }
    box.appendChild(table);
    document.body.setAttribute("data-note", id);
  }

  document.querySelectorAll(".sk-finding").forEach(function (b) {
    b.addEventListener("click", function () { selectFinding(Number(b.getAttribute("data-index"))); });
  });
  main.addEventListener("click", function (ev) {
    var el = ev.target.closest ? ev.target.closest("g.note") : null;
    if (!el || !el.id) { return; }
    clear();
    highlight([el.id]);
    showNote(el.id);
    if (history.replaceState) { history.replaceState(null, "", "#note=" + encodeURIComponent(el.id)); }
  });
  document.addEventListener("keydown", function (ev) {
    if (!findings.length || ev.target.tagName === "INPUT") { return; }
    if (ev.key === "j" || ev.key === "ArrowDown") { selectFinding(Math.min(findings.length - 1, current + 1)); ev.preventDefault(); }
    if (ev.key === "k" || ev.key === "ArrowUp") { selectFinding(Math.max(0, current - 1)); ev.preventDefault(); }
  });

  function fromHash() {
    var h = decodeURIComponent(location.hash.slice(1));
    var m = /^finding=(\d+)$/.exec(h);
    if (m) { selectFinding(Number(m[1])); return; }
    m = /^note=(.+)$/.exec(h);
    if (m && noteEl(m[1])) { clear(); highlight([m[1]]); showNote(m[1]); noteEl(m[1]).scrollIntoView({ block: "center" }); }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.body.setAttribute("data-ready", "1");
})();
