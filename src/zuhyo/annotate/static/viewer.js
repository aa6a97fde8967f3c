// Zoom and pan for dense charts (plain JS): wheel or +/- to zoom about the pointer, drag to pan, 0 to fit.
(function () {
  "use strict";
  function setup(viewer) {
    var img = viewer.querySelector("img");
    if (!img) { return; }
    var scale = 1, x = 0, y = 0, drag = null;
    function apply() { img.style.transform = "translate(" + x + "px," + y + "px) scale(" + scale + ")"; }
    function fit() {
      var w = img.naturalWidth || 1, h = img.naturalHeight || 1;
      scale = Math.min(viewer.clientWidth / w, viewer.clientHeight / h, 4);
      x = (viewer.clientWidth - w * scale) / 2; y = (viewer.clientHeight - h * scale) / 2; apply();
    }
    function zoomAt(factor, cx, cy) {
      var next = Math.min(Math.max(scale * factor, 0.05), 40);
      factor = next / scale;
      x = cx - (cx - x) * factor; y = cy - (cy - y) * factor; scale = next; apply();
    }
    function zoomCentre(factor) { zoomAt(factor, viewer.clientWidth / 2, viewer.clientHeight / 2); }
    if (img.complete) { fit(); } else { img.addEventListener("load", fit); }
    viewer.addEventListener("wheel", function (e) {
      e.preventDefault();
      var r = viewer.getBoundingClientRect();
      zoomAt(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - r.left, e.clientY - r.top);
    }, { passive: false });
    viewer.addEventListener("pointerdown", function (e) {
      drag = { px: e.clientX, py: e.clientY, x: x, y: y }; viewer.setPointerCapture(e.pointerId);
      viewer.classList.add("dragging");
    });
    viewer.addEventListener("pointermove", function (e) {
      if (!drag) { return; }
      x = drag.x + e.clientX - drag.px; y = drag.y + e.clientY - drag.py; apply();
    });
    function end() { drag = null; viewer.classList.remove("dragging"); }
    viewer.addEventListener("pointerup", end);
    viewer.addEventListener("pointercancel", end);
    viewer.addEventListener("dblclick", function (e) {
      var r = viewer.getBoundingClientRect(); zoomAt(2, e.clientX - r.left, e.clientY - r.top);
    });
    var tools = document.querySelectorAll("[data-zoom]");
    tools.forEach(function (b) {
      b.addEventListener("click", function () {
        var v = b.getAttribute("data-zoom");
        if (v === "fit") { fit(); } else { zoomCentre(parseFloat(v)); }
      });
    });
    document.addEventListener("keydown", function (e) {
      var t = e.target;
      if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) { return; }
      if (e.key === "+" || e.key === "=") { zoomCentre(1.25); }
      else if (e.key === "-") { zoomCentre(0.8); }
      else if (e.key === "0") { fit(); }
    });
    window.addEventListener("resize", fit);
  }
  document.querySelectorAll(".viewer").forEach(setup);
})();
