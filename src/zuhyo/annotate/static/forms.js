// Keyboard shortcuts and submit keys for the task forms (plain JS).
// - Every form with a submit_key field gets a fresh UUID when the page loads: a retried submit (double click,
//   reload after a network error) carries the same key and is answered once by the server.
// - Ctrl+Enter (Cmd+Enter) submits the main form; Alt+1..9 toggles the n-th flag checkbox; Alt+S opens skip;
//   Alt+V / Alt+F pick Valid / Flawed on the review page; "q" focuses the first text field.
(function () {
  "use strict";
  function uuid() {
    if (window.crypto && window.crypto.randomUUID) { return window.crypto.randomUUID(); }
    var b = new Uint8Array(16); window.crypto.getRandomValues(b);
    b[6] = (b[6] & 15) | 64; b[8] = (b[8] & 63) | 128;
    var h = Array.prototype.map.call(b, function (v) { return (v + 256).toString(16).slice(1); }).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  }
  document.querySelectorAll("input[name=submit_key]").forEach(function (i) { if (!i.value) { i.value = uuid(); } });
  document.querySelectorAll("form").forEach(function (f) {
    f.addEventListener("submit", function () {
      f.querySelectorAll("button[type=submit]").forEach(function (b) { setTimeout(function () { b.disabled = true; }, 0); });
    });
  });
  document.querySelectorAll("button.use-draft").forEach(function (b) {
    b.addEventListener("click", function () {
      var q = document.getElementById("question"), a = document.getElementById("answer");
      var d = document.getElementById("from_draft_id");
      if (q) { q.value = b.getAttribute("data-question"); }
      if (a) { a.value = b.getAttribute("data-answer"); }
      if (d) { d.value = b.getAttribute("data-id"); }
    });
  });
  var main = document.querySelector("form[data-main]");
  document.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && main) {
      e.preventDefault();
      if (main.requestSubmit) { main.requestSubmit(); } else { main.submit(); }
      return;
    }
    if (e.altKey && /^[1-9]$/.test(e.key)) {
      var boxes = document.querySelectorAll("input[type=checkbox][data-shortcut]");
      var box = boxes[parseInt(e.key, 10) - 1];
      if (box) { e.preventDefault(); box.checked = !box.checked; }
      return;
    }
    if (e.altKey && (e.key === "s" || e.key === "S")) {
      var skip = document.getElementById("skip");
      if (skip) { e.preventDefault(); skip.open = true; var r = skip.querySelector("select, textarea"); if (r) { r.focus(); } }
      return;
    }
    if (e.altKey && (e.key === "v" || e.key === "V" || e.key === "f" || e.key === "F")) {
      var want = (e.key === "v" || e.key === "V") ? "valid" : "flawed";
      var radio = document.querySelector("input[type=radio][name=rating][value=" + want + "]");
      if (radio) { e.preventDefault(); radio.checked = true; }
      return;
    }
    var t = e.target;
    if (e.key === "q" && !(t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT"))) {
      var first = document.querySelector("form[data-main] textarea, form[data-main] input[type=text]");
      if (first) { e.preventDefault(); first.focus(); }
    }
  });
})();
