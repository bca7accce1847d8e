/*
 * The annotation page: live π, the μ + ν ≤ 100 % rule while dragging, keyboard shortcuts, time on item.
 *
 * The μ + ν ≤ 100 % rule: when the slider being moved would push μ + ν above 1000 ‰, the OTHER slider of the
 * pair yields (it is lowered to 1000 − the moved value) and a note under the pair says so. The slider in the
 * annotator's hand always goes where they put it: refusing the drag would feel broken, and silently clamping the
 * moved slider would surprise. The server validates again and refuses μ + ν > 1000 ‰ whatever the page sends.
 *
 * Values travel as integer per-mille (0..1000); the page shows percent.
 *
 * Time on item: the clock starts when an item's frame is set up (first load, and every frame htmx swaps in), counts
 * only while the tab is visible (Page Visibility API), and is written into the form just before it is sent. Accept
 * sends the clock's reading too (the time to Accept, for the rubber-stamp signals), and the frame it brings back for
 * the same item keeps the clock running: the save then counts the whole time on the item, before and after Accept.
 *
 * Languages: texts come from Django's JavaScript catalog (gettext, interpolate: the page loads /jsi18n/ first).
 * Shortcuts stay on the same physical keys whatever the keyboard layout: a letter or digit the layout turns into
 * another script (Arabic, Hindi, Russian…) is read from event.code, the key's place on the keyboard. In a
 * right-to-left page the sliders run right to left like the text, so the arrow keys move the thumb the way they
 * point; the triangle is not mirrored (static/js/ifs_input.js).
 */
(function () {
  "use strict";

  var PERMILLE = 1000;
  var gettext = window.gettext || function (text) { return text; };
  var interpolate = window.interpolate || function (format, values) {
    return format.replace(/%\((\w+)\)s/g, function (_, name) { return String(values[name]); });
  };
  // lastPreset: the cell a preset key just set and where it moved the focus, so that "-" / "+" pressed next adjust
  // the judgment just given ("4", then "-": lean support, less sure), not the next response's empty one.
  var state = { frame: null, item: null, started: 0, visibleMs: 0, lastVisible: 0, lastPreset: null };

  function pct(permille) {
    var value = permille / 10;
    return (Number.isInteger(value) ? value.toFixed(0) : value.toFixed(1)) + " %";
  }

  function sliders() {
    return state.frame ? Array.prototype.slice.call(state.frame.querySelectorAll("input.slider")) : [];
  }

  function paint(cell) {
    var mu = parseInt(cell.querySelector("input.mu").value, 10);
    var nu = parseInt(cell.querySelector("input.nu").value, 10);
    var pi = Math.max(0, PERMILLE - mu - nu);
    cell.querySelector(".mu-out").textContent = pct(mu);
    cell.querySelector(".nu-out").textContent = pct(nu);
    cell.querySelector(".pi-out").textContent = pct(pi);
    cell.querySelector(".bar-mu").style.width = mu / 10 + "%";
    cell.querySelector(".bar-pi").style.width = pi / 10 + "%";
    cell.querySelector(".bar-nu").style.width = nu / 10 + "%";
    // Screen readers announce the slider in percent, not the per-mille it stores.
    cell.querySelector("input.mu").setAttribute("aria-valuetext", pct(mu));
    cell.querySelector("input.nu").setAttribute("aria-valuetext", pct(nu));
    if (window.PenumbraIfsInput) window.PenumbraIfsInput.place(cell, mu, nu);
  }

  function setSlider(slider, value) {
    // The step first: a range input rounds its value to its step, and a value must be stored exactly as shown.
    slider.step = value % 10 === 0 ? "10" : "1";
    slider.value = String(value);
  }

  // μ and ν of a cell set together (the triangle, a preset, the hesitation keys): always within μ + ν ≤ 100 %, so
  // the yield rule has nothing to do and its note goes.
  function setCell(cell, mu, nu) {
    setSlider(cell.querySelector("input.mu"), mu);
    setSlider(cell.querySelector("input.nu"), nu);
    var note = cell.querySelector(".yield-note");
    if (note.classList.contains("shown")) {
      note.classList.remove("shown");
      note.textContent = "\u00a0";
    }
    paint(cell);
  }

  function currentCell(target) {
    var cell = target && target.closest ? target.closest("fieldset.ifs") : null;
    var article = !cell && target && target.closest ? target.closest("article.response") : null;
    if (article) cell = article.querySelector("fieldset.ifs");  // reading its text: the preset is for that answer
    return cell || (state.frame && state.frame.querySelector("fieldset.ifs"));
  }

  // After a preset the next response's first slider takes the focus (after the last one, Save): one key per response.
  function advanceFrom(cell) {
    var cells = Array.prototype.slice.call(state.frame.querySelectorAll("fieldset.ifs"));
    var next = cells[cells.indexOf(cell) + 1];
    var target = next ? next.querySelector("input.mu") : document.getElementById("save-button");
    if (target) target.focus();
  }

  // The IFS keys (static/js/ifs_input.js): a preset digit, or "-" / "+" for hesitation alone. True if handled.
  function ifsKey(event, key) {
    var input = window.PenumbraIfsInput;
    if (!input || !state.frame.querySelector("fieldset.ifs")) return false;
    var cell = currentCell(event.target);
    var preset = input.presetFor(key);
    if (preset) {
      setCell(cell, preset.mu, preset.nu);
      advanceFrom(cell);
      state.lastPreset = { cell: cell, focused: document.activeElement };
      return true;
    }
    var more = key === "-" || key === "_";
    if (more || key === "+" || key === "=") {
      var last = state.lastPreset;
      if (last && last.focused === document.activeElement && state.frame.contains(last.cell)) cell = last.cell;
      var moved = input.hesitate(
        parseInt(cell.querySelector("input.mu").value, 10),
        parseInt(cell.querySelector("input.nu").value, 10),
        more ? 100 : -100
      );
      setCell(cell, moved.mu, moved.nu);
      return true;
    }
    return false;
  }

  // The other slider yields: see the comment at the top of this file.
  function keepWithinOne(moved) {
    var cell = moved.closest("fieldset.ifs");
    var other = cell.querySelector(moved.classList.contains("mu") ? "input.nu" : "input.mu");
    var movedValue = parseInt(moved.value, 10);
    var otherValue = parseInt(other.value, 10);
    var note = cell.querySelector(".yield-note");
    if (movedValue + otherValue > PERMILLE) {
      var yielded = PERMILLE - movedValue;
      other.step = yielded % 10 === 0 ? "10" : "1";
      other.value = String(yielded);
      var movedName = moved.classList.contains("mu") ? "μ" : "ν";
      var otherName = moved.classList.contains("mu") ? "ν" : "μ";
      // The note's line is reserved in the layout (CSS), so showing or clearing it never moves the slider under a
      // dragging pointer: a shift made Chromium drop the drag.
      note.textContent = interpolate(
        gettext("%(other)s lowered to %(value)s so μ + ν ≤ %(limit)s (you raised %(moved)s)"),
        { other: otherName, value: pct(yielded), limit: pct(PERMILLE), moved: movedName }, true);
      note.classList.add("shown");
    } else if (note.classList.contains("shown") && movedValue + otherValue < PERMILLE) {
      note.classList.remove("shown");
      note.textContent = "\u00a0";
    }
    paint(cell);
  }

  function focusSlider(delta) {
    var all = sliders();
    if (!all.length) return;
    var index = all.indexOf(document.activeElement);
    var next = index === -1 ? (delta > 0 ? 0 : all.length - 1) : (index + delta + all.length) % all.length;
    all[next].focus();
  }

  function nudge(slider, amount) {
    var value = Math.min(PERMILLE, Math.max(0, parseInt(slider.value, 10) + amount));
    setSlider(slider, value);
    keepWithinOne(slider);
  }

  function elapsedMs() {
    var total = state.visibleMs;
    if (state.lastVisible) total += performance.now() - state.lastVisible;
    return Math.round(total);
  }

  function toggle(panelId, focusSelector) {
    var panel = document.getElementById(panelId);
    if (!panel) return;
    panel.hidden = !panel.hidden;
    if (!panel.hidden && focusSelector) {
      var target = panel.querySelector(focusSelector);
      if (target) target.focus();
    }
  }

  function click(id) {
    var element = document.getElementById(id);
    if (element) element.click();
    return Boolean(element);
  }

  // Reading room. Focus mode is remembered in this browser (localStorage) for every item; an expanded answer and a
  // collapsed prompt are for this item only.
  var FOCUS_KEY = "penumbra.focusMode";

  function remembered(key) {
    try { return window.localStorage.getItem(key) === "1"; } catch (error) { return false; }
  }

  function remember(key, on) {
    try { window.localStorage.setItem(key, on ? "1" : "0"); } catch (error) { /* private mode: not remembered */ }
  }

  function setFocusMode(on) {
    state.frame.classList.toggle("focus-mode", on);
    var button = document.getElementById("focus-toggle");
    if (button) button.setAttribute("aria-pressed", String(on));
  }

  function togglePrompt() {
    var collapsed = state.frame.classList.toggle("prompt-collapsed");
    var button = document.getElementById("prompt-toggle");
    if (button) {
      button.setAttribute("aria-expanded", String(!collapsed));
      button.firstChild.textContent = (collapsed ? gettext("Show") : gettext("Collapse")) + " ";
    }
  }

  function toggleExpand(article) {
    if (!article) return;
    var on = !article.classList.contains("expanded");
    state.frame.querySelectorAll("article.response").forEach(function (other) {
      other.classList.remove("expanded");
      var toggle = other.querySelector(".expand-toggle");
      toggle.setAttribute("aria-pressed", "false");
      toggle.firstChild.textContent = gettext("Expand") + " ";
    });
    article.classList.toggle("expanded", on);
    state.frame.classList.toggle("has-expanded", on);
    var button = article.querySelector(".expand-toggle");
    button.setAttribute("aria-pressed", String(on));
    button.firstChild.textContent = (on ? gettext("Back") : gettext("Expand")) + " ";
    if (on) {
      var text = article.querySelector(".response-text");
      if (text) text.focus({ preventScroll: true });  // arrows and Page Down now scroll the answer
    }
  }

  function currentArticle(target) {
    return (target && target.closest && target.closest("article.response")) ||
      state.frame.querySelector("article.response.expanded") || state.frame.querySelector("article.response");
  }

  // The done list loads when asked for (htmx GET into the panel); D again hides it.
  function openDone() {
    var panel = document.getElementById("done-panel");
    var link = document.getElementById("done-toggle");
    if (!panel || !link) return;
    if (!panel.hidden) { panel.hidden = true; return; }
    link.click();
  }

  function submitSave() {
    var form = document.getElementById("annotate-form");
    if (form) form.requestSubmit();
  }

  // The shortcut's Latin letter or digit: from event.key on a Latin layout, from the key's place (event.code) when the
  // layout types another script there (ت for J on an Arabic keyboard, ١ for 1).
  function physicalKey(event) {
    var key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (key.length !== 1 || /[a-z0-9?+=_-]/.test(key) || !event.code) return key;
    var match = /^(?:Key([A-Z])|Digit([0-9]))$/.exec(event.code);
    if (match) return (match[1] || match[2]).toLowerCase();
    if (event.code === "Slash" && event.shiftKey) return "?";
    if (event.code === "Minus") return "-";
    if (event.code === "Equal") return "+";
    return key;
  }

  function onKey(event) {
    if (!state.frame || event.defaultPrevented || event.altKey || event.metaKey) return;
    var target = event.target;
    var typing = target.matches && target.matches("input[type=text], textarea, select");
    if (event.ctrlKey && event.key === "Enter") {
      event.preventDefault();
      submitSave();
      return;
    }
    if (event.key === "Escape") {
      ["help-panel", "skip-panel", "done-panel"].forEach(function (id) {
        var panel = document.getElementById(id);
        if (panel) panel.hidden = true;
      });
      var expanded = state.frame.querySelector("article.response.expanded");
      if (expanded) toggleExpand(expanded);
      return;
    }
    if (event.key === "Enter" && target.id === "skip-reason") {
      event.preventDefault();
      target.form.requestSubmit();
      return;
    }
    if (typing || event.ctrlKey) return;
    var isSlider = target.classList && target.classList.contains("slider");
    if (isSlider && (event.key === "ArrowLeft" || event.key === "ArrowRight" || event.key === "ArrowUp" || event.key === "ArrowDown")) {
      // Our own step so Shift gives 10 % and the yield rule runs on every press.
      event.preventDefault();
      var rtl = window.getComputedStyle(target).direction === "rtl";
      var up = event.key === "ArrowUp" || event.key === (rtl ? "ArrowLeft" : "ArrowRight");
      nudge(target, (up ? 1 : -1) * (event.shiftKey ? 100 : 10));
      return;
    }
    if (isSlider && (event.key === "Home" || event.key === "End")) {
      event.preventDefault();
      nudge(target, event.key === "Home" ? -PERMILLE : PERMILLE);
      return;
    }
    var key = physicalKey(event);
    if (ifsKey(event, key)) { event.preventDefault(); return; }
    if (key === "e") { event.preventDefault(); toggleExpand(currentArticle(target)); return; }
    if (key === "c") { event.preventDefault(); togglePrompt(); return; }
    if (key === "f") {
      event.preventDefault();
      var on = !state.frame.classList.contains("focus-mode");
      remember(FOCUS_KEY, on);
      setFocusMode(on);
      return;
    }
    if (key === "j") { event.preventDefault(); focusSlider(1); }
    else if (key === "k") { event.preventDefault(); focusSlider(-1); }
    else if (key === "s") { event.preventDefault(); submitSave(); }
    else if (key === "x") { event.preventDefault(); toggle("skip-panel", "select"); }
    else if (key === "d") { event.preventDefault(); openDone(); }
    else if (key === "p") { event.preventDefault(); click("previous-link"); }
    else if (key === "l") { event.preventDefault(); click("accept-button"); }
    else if (key === "n") { event.preventDefault(); click("keep-label"); }
    else if (key === "?") { event.preventDefault(); toggle("help-panel"); }
    else if (/^[0-9]$/.test(key)) {
      var radio = state.frame.querySelector('input[type=radio][data-key="' + key + '"]');
      if (radio) { event.preventDefault(); radio.checked = true; radio.focus(); }
    }
  }

  function showTimer() {
    var timer = state.frame && state.frame.querySelector("#item-timer");
    if (!timer) return;
    var seconds = Math.floor(elapsedMs() / 1000);
    var rest = seconds % 60;
    timer.textContent = Math.floor(seconds / 60) + ":" + (rest < 10 ? "0" : "") + rest;
  }

  function init() {
    var frame = document.getElementById("annotate-frame");
    if (!frame || frame.dataset.ready) return;
    frame.dataset.ready = "1";
    var sameItem = state.item !== null && state.item === frame.dataset.item;
    state.frame = frame;
    state.item = frame.dataset.item;
    state.lastPreset = null;
    if (!(sameItem && frame.dataset.justAccepted)) {
      state.visibleMs = 0;
      state.lastVisible = document.visibilityState === "visible" ? performance.now() : 0;
    }

    frame.querySelectorAll("fieldset.ifs").forEach(function (cell) {
      if (window.PenumbraIfsInput) window.PenumbraIfsInput.build(cell, setCell);
      paint(cell);
    });
    frame.addEventListener("input", function (event) {
      if (event.target.classList.contains("slider")) keepWithinOne(event.target);
    });
    var skipToggle = document.getElementById("skip-toggle");
    if (skipToggle) skipToggle.addEventListener("click", function () { toggle("skip-panel", "select"); });
    setFocusMode(remembered(FOCUS_KEY));
    var focusToggle = document.getElementById("focus-toggle");
    if (focusToggle) {
      focusToggle.addEventListener("click", function () {
        var on = !state.frame.classList.contains("focus-mode");
        remember(FOCUS_KEY, on);
        setFocusMode(on);
      });
    }
    var promptToggle = document.getElementById("prompt-toggle");
    if (promptToggle) promptToggle.addEventListener("click", togglePrompt);
    frame.querySelectorAll(".expand-toggle").forEach(function (button) {
      button.addEventListener("click", function () { toggleExpand(button.closest("article.response")); });
    });
    var helpToggle = document.getElementById("help-toggle");
    if (helpToggle) helpToggle.addEventListener("click", function () { toggle("help-panel"); });
    var first = sliders()[0] || frame.querySelector("input[type=radio]");
    // A refused skip comes back with its panel open and the field to fix marked: the focus goes there.
    var refusedSkip = frame.querySelector("#skip-panel:not([hidden]) [aria-invalid=true]");
    if (refusedSkip) first = refusedSkip;
    if (first) first.focus({ preventScroll: true });
    // After Accept the filled values stay in view (the swap itself does not scroll).
    if (frame.dataset.justAccepted) {
      var filled = frame.querySelector("fieldset.ifs, fieldset.choice");
      if (filled) filled.scrollIntoView({ block: "nearest" });
    }
    showTimer();
  }

  window.setInterval(showTimer, 1000);

  // Capture phase on the document runs before any listener on the form itself. htmx serialises the form inside
  // its own submit listener, which it attaches when it processes swapped content, before htmx:afterSettle runs
  // init(): a listener added to the form in init() came too late, and every item after the first was sent as 0 ms.
  document.addEventListener(
    "submit",
    function (event) {
      var form = event.target;
      if (!form || !state.frame || !state.frame.contains(form)) return;
      var field = form.querySelector("input[name=time_spent_ms], input[name=time_on_item_ms]");
      if (field) field.value = String(elapsedMs());
    },
    true
  );

  // Time on item counts only while the tab is visible.
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      if (!state.lastVisible) state.lastVisible = performance.now();
    } else if (state.lastVisible) {
      state.visibleMs += performance.now() - state.lastVisible;
      state.lastVisible = 0;
    }
  });
  // A save that got no answer it can trust (a 502/503/504 while the database or a proxy is briefly away, or a
  // connection that dropped) may or may not have been stored: the page sends the same form again, with the same
  // client token, so the server stores it at most once, and says only that: not confirmed yet, then saved or not.
  var RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000];
  var retry = { form: null, attempt: 0, timer: 0 };

  function saveStatus(key, seconds) {
    var box = document.getElementById("save-status");
    if (!box) return;
    var text = box.dataset[key] || "";
    box.textContent = text.replace("{seconds}", String(seconds || ""));
    box.hidden = !text;
  }

  function isSave(elt) {
    return elt && elt.id === "annotate-form" && elt.querySelector("input[name=client_token]");
  }

  function retryAfterMs(xhr, attempt) {
    var header = xhr && xhr.getResponseHeader ? parseInt(xhr.getResponseHeader("Retry-After") || "", 10) : NaN;
    var planned = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)];
    return Number.isFinite(header) && header > 0 ? Math.min(header * 1000, 30000) : planned;
  }

  function unconfirmed(event) {
    var form = event.detail && event.detail.elt;
    if (!isSave(form)) return;
    var xhr = event.detail.xhr;
    if (event.type === "htmx:responseError" && [502, 503, 504].indexOf(xhr && xhr.status) < 0) return;
    if (retry.form !== form) retry = { form: form, attempt: 0, timer: 0 };
    if (retry.attempt >= RETRY_DELAYS_MS.length) {
      saveStatus("failed");
      retry.form = null;
      return;
    }
    var wait = retryAfterMs(xhr, retry.attempt);
    retry.attempt += 1;
    saveStatus("retrying", Math.round(wait / 1000));
    window.clearTimeout(retry.timer);
    retry.timer = window.setTimeout(function () {
      if (!document.body.contains(form)) return;
      saveStatus("sending");
      htmx.trigger(form, "submit");
    }, wait);
  }

  document.addEventListener("htmx:responseError", unconfirmed);
  document.addEventListener("htmx:sendError", unconfirmed);
  document.addEventListener("htmx:timeout", unconfirmed);
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (isSave(event.detail && event.detail.elt) && event.detail.xhr.status < 400) retry = { form: null, attempt: 0 };
  });

  document.addEventListener("keydown", onKey);
  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:afterSettle", init);
  document.addEventListener("htmx:afterSwap", function (event) {
    var panel = event.detail && event.detail.target;
    if (!panel || panel.id !== "done-panel") return;
    panel.hidden = false;
    var firstLink = panel.querySelector("a");
    (firstLink || panel).focus();
  });
  if (document.readyState !== "loading") init();
})();
