/*
 * The fast IFS input: a support/opposition triangle beside each pair of sliders, and keyboard presets.
 *
 * Why: moving four sliders one by one cost a median of 14 keystrokes per item. Most judgments are one of a few
 * states ("clearly meets it", "leans towards meeting it", "cannot tell", …), so one key or one click should set μ and
 * ν together; the sliders stay, in step, as the accessible source of truth (the form posts them, screen readers read
 * them), and the triangle is a pointer shortcut onto them (aria-hidden).
 *
 * The triangle is the set of valid values, μ, ν ≥ 0 and μ + ν ≤ 100 %, drawn in barycentric coordinates: the right
 * corner is full support (μ = 100 %), the left corner full opposition (ν = 100 %), the top corner full hesitation
 * (π = 100 %). A point inside is (μ, ν, π) with each corner's weight; a press or a drag sets both values, snapped to
 * 5 % so a click lands on round figures, and a point outside is pulled to the nearest edge. The presets are drawn as
 * small dots, so pointer users see them too.
 *
 * Keys (the page's key handler in annotate.js calls presetKey): a preset digit sets the cell that has the focus and
 * moves on to the next response (one key per response, then S); "-" and "+" move hesitation alone by 10 %, keeping
 * μ:ν (the values may then fall between whole percents; the page shows them to 0.1 % and stores exactly that).
 * Values are integer per-mille, as everywhere on the page.
 */
(function () {
  "use strict";

  var PERMILLE = 1000;
  var SNAP = 50; // per-mille: a click lands on a multiple of 5 %
  var SVG = "http://www.w3.org/2000/svg";
  // Corners in the view box: right = support, left = opposition, top = hesitation.
  var R = { x: 112, y: 96 };
  var L = { x: 8, y: 96 };
  var T = { x: 60, y: 6 };

  function point(mu, nu) {
    var pi = PERMILLE - mu - nu;
    return {
      x: (mu * R.x + nu * L.x + pi * T.x) / PERMILLE,
      y: (mu * R.y + nu * L.y + pi * T.y) / PERMILLE,
    };
  }

  // The (μ, ν) in per-mille of a point of the view box, pulled into the triangle and snapped.
  function valuesAt(x, y) {
    var v0 = { x: R.x - T.x, y: R.y - T.y };
    var v1 = { x: L.x - T.x, y: L.y - T.y };
    var v2 = { x: x - T.x, y: y - T.y };
    var d00 = v0.x * v0.x + v0.y * v0.y;
    var d01 = v0.x * v1.x + v0.y * v1.y;
    var d11 = v1.x * v1.x + v1.y * v1.y;
    var d20 = v2.x * v0.x + v2.y * v0.y;
    var d21 = v2.x * v1.x + v2.y * v1.y;
    var den = d00 * d11 - d01 * d01;
    var mu = Math.max(0, (d11 * d20 - d01 * d21) / den);
    var nu = Math.max(0, (d00 * d21 - d01 * d20) / den);
    if (mu + nu > 1) {
      var sum = mu + nu;
      mu /= sum;
      nu /= sum;
    }
    var muPm = Math.round((mu * PERMILLE) / SNAP) * SNAP;
    var nuPm = Math.round((nu * PERMILLE) / SNAP) * SNAP;
    if (muPm + nuPm > PERMILLE) nuPm = PERMILLE - muPm;
    return { mu: muPm, nu: nuPm };
  }

  function presets() {
    var frame = document.getElementById("annotate-frame");
    var raw = (frame && frame.dataset.ifsPresets) || "";
    return raw.split(" ").filter(Boolean).map(function (entry) {
      var parts = entry.split(":");
      return { key: parts[0], mu: parseInt(parts[1], 10), nu: parseInt(parts[2], 10) };
    });
  }

  function make(name, attributes, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach(function (key) { node.setAttribute(key, attributes[key]); });
    if (parent) parent.appendChild(node);
    return node;
  }

  function label(parent, x, y, text, anchor) {
    var node = make("text", { x: x, y: y, "text-anchor": anchor, class: "tri-label" }, parent);
    node.textContent = text;
  }

  // Draw the triangle of one cell (a fieldset.ifs); ``set(cell, mu, nu)`` writes the sliders.
  function build(cell, set) {
    if (cell.querySelector("svg.ifs-triangle")) return;
    var svg = make("svg", {
      class: "ifs-triangle",
      viewBox: "0 0 120 110",
      "aria-hidden": "true",
      focusable: "false",
    });
    make("polygon", { class: "tri-area", points: [R, L, T].map(function (p) { return p.x + "," + p.y; }).join(" ") }, svg);
    presets().forEach(function (preset) {
      var at = point(preset.mu, preset.nu);
      make("circle", { class: "tri-preset", cx: at.x, cy: at.y, r: 2.2 }, svg);
    });
    label(svg, R.x, 108, "μ", "end");
    label(svg, L.x, 108, "ν", "start");
    label(svg, T.x + 6, 12, "π", "start");
    make("circle", { class: "tri-mark", r: 5, cx: T.x, cy: T.y }, svg);

    var dragging = false;
    function fromEvent(event) {
      var matrix = svg.getScreenCTM();
      if (!matrix) return;
      var p = svg.createSVGPoint();
      p.x = event.clientX;
      p.y = event.clientY;
      var local = p.matrixTransform(matrix.inverse());
      var values = valuesAt(local.x, local.y);
      set(cell, values.mu, values.nu);
    }
    svg.addEventListener("pointerdown", function (event) {
      event.preventDefault();
      dragging = true;
      svg.setPointerCapture(event.pointerId);
      fromEvent(event);
    });
    svg.addEventListener("pointermove", function (event) { if (dragging) fromEvent(event); });
    function stop(event) {
      if (!dragging) return;
      dragging = false;
      if (svg.hasPointerCapture(event.pointerId)) svg.releasePointerCapture(event.pointerId);
    }
    svg.addEventListener("pointerup", stop);
    svg.addEventListener("pointercancel", stop);
    var slot = cell.querySelector(".ifs-pad") || cell;
    slot.appendChild(svg);
  }

  // Move the marker to the cell's current values.
  function place(cell, mu, nu) {
    var mark = cell.querySelector(".tri-mark");
    if (!mark) return;
    var at = point(mu, nu);
    mark.setAttribute("cx", at.x.toFixed(2));
    mark.setAttribute("cy", at.y.toFixed(2));
  }

  // More (delta > 0) or less hesitation by |delta| per-mille, μ:ν kept: μ + ν shrinks or grows in proportion.
  function hesitate(mu, nu, delta) {
    var total = mu + nu;
    var target = Math.min(PERMILLE, Math.max(0, total - delta));
    if (target === total) return { mu: mu, nu: nu };
    if (total === 0) return { mu: Math.floor(target / 2), nu: target - Math.floor(target / 2) };
    var newMu = Math.round((mu * target) / total);
    return { mu: newMu, nu: target - newMu };
  }

  function presetFor(key) {
    var found = null;
    presets().forEach(function (preset) { if (preset.key === key) found = preset; });
    return found;
  }

  window.PenumbraIfsInput = { build: build, place: place, hesitate: hesitate, presetFor: presetFor, valuesAt: valuesAt };
})();
