/*
 * The ranking input of a binary item with three responses or more (templates/annotation/partials/frame.html).
 *
 * Three ways to the same order, best first: number keys (press the responses' numbers from best to worst; after
 * k − 1 presses the last one is placed too, Escape starts again), the up and down buttons of each row (keyboard and
 * screen readers: the button keeps the focus and the status line says where the row went), and a drag by the row's
 * handle with pointer events (mouse, pen and touch alike; HTML5 drag and drop does not fire on touch screens).
 *
 * The hidden field "ranking" stays empty until the annotator acts: the screen order is never saved as a ranking
 * nobody gave. The server checks the order (annotation.checks.check_ranking); its head is the binary choice.
 */
(function () {
  "use strict";

  function input() { return document.getElementById("ranking-input"); }

  function rows(box) { return Array.prototype.slice.call(box.querySelectorAll(".ranking-row")); }

  function name(row) { return row.querySelector(".ranking-name").textContent.trim(); }

  function commit(box, moved) {
    var list = rows(box);
    box.querySelector("#ranking-value").value = list.map(function (row) { return row.dataset.position; }).join(",");
    var status = box.querySelector("#ranking-status");
    var names = list.map(name);
    status.textContent = (moved ? name(moved) + ": " + (list.indexOf(moved) + 1) + " / " + list.length + ". " : "") +
      names.join(" > ");
  }

  function move(box, row, step) {
    var list = row.parentNode;
    if (step < 0 && row.previousElementSibling) list.insertBefore(row, row.previousElementSibling);
    else if (step > 0 && row.nextElementSibling) list.insertBefore(row.nextElementSibling, row);
    commit(box, row);
  }

  // Number keys: the n-th press puts that response at place n.
  function byKey(box, key) {
    var row = box.querySelector('.ranking-row[data-key="' + key + '"]');
    if (!row) return false;
    var placed = parseInt(box.dataset.placed || "0", 10);
    var list = rows(box);
    if (list.indexOf(row) < placed) return true; // already placed in this round
    row.parentNode.insertBefore(row, list[placed]);
    placed += 1;
    if (placed >= list.length - 1) placed = 0; // the last one is placed by elimination; a new round may start
    box.dataset.placed = String(placed);
    commit(box, row);
    return true;
  }

  function onKey(event) {
    var box = input();
    if (!box || event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return;
    var target = event.target;
    if (target.matches && target.matches("input[type=text], textarea, select")) return;
    if (event.key === "Escape") { box.dataset.placed = "0"; return; }
    if (/^[1-9]$/.test(event.key) && byKey(box, event.key)) event.preventDefault();
  }

  function onClick(event) {
    var box = input();
    if (!box) return;
    var button = event.target.closest && event.target.closest(".ranking-move");
    if (button && box.contains(button)) {
      move(box, button.closest(".ranking-row"), parseInt(button.dataset.step, 10));
      button.focus();
      return;
    }
    if (event.target.id === "ranking-confirm") commit(box, null);
  }

  // Drag by the handle: the row follows the pointer's height among its siblings.
  var dragging = null;
  function onPointerDown(event) {
    var handle = event.target.closest && event.target.closest(".ranking-handle");
    if (!handle) return;
    event.preventDefault();
    dragging = handle.closest(".ranking-row");
    dragging.classList.add("dragging");
    try { handle.setPointerCapture(event.pointerId); } catch (e) { /* a pointer already gone: the drag still follows moves */ }
  }
  function onPointerMove(event) {
    if (!dragging) return;
    var box = input();
    rows(box).forEach(function (other) {
      if (other === dragging) return;
      var rect = other.getBoundingClientRect();
      var middle = rect.top + rect.height / 2;
      var before = dragging.compareDocumentPosition(other) & Node.DOCUMENT_POSITION_PRECEDING;
      if (before && event.clientY < middle) other.parentNode.insertBefore(dragging, other);
      else if (!before && event.clientY > middle) other.parentNode.insertBefore(other, dragging);
    });
  }
  function onPointerUp() {
    if (!dragging) return;
    var row = dragging;
    dragging = null;
    row.classList.remove("dragging");
    commit(input(), row);
  }

  document.addEventListener("keydown", onKey);
  document.addEventListener("click", onClick);
  document.addEventListener("pointerdown", onPointerDown);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerUp);
})();
