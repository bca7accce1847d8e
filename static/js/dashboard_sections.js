// The dashboard's sections fold: a button in each section's heading hides its body, and the folded sections are
// remembered per project in localStorage, so a lead who folds the review queue finds it folded on the next visit
// and after each 10-second refresh of the figures (htmx swaps the whole block, so the state is applied again).
(function () {
  "use strict";
  var root = document.querySelector("main");
  var key = "penumbra:dashboard-folded:" + window.location.pathname;

  function load() {
    try {
      var stored = JSON.parse(window.localStorage.getItem(key) || "[]");
      return Array.isArray(stored) ? stored : [];
    } catch (error) {
      return [];  // storage refused (private mode) or garbled: everything open
    }
  }

  function save(folded) {
    try {
      window.localStorage.setItem(key, JSON.stringify(folded));
    } catch (error) {
      // Storage refused: the fold still works for this page view.
    }
  }

  function setFolded(section, button, folded) {
    section.classList.toggle("is-folded", folded);
    button.setAttribute("aria-expanded", folded ? "false" : "true");
    button.textContent = folded ? "Show" : "Hide";
  }

  function prepare(scope) {
    var folded = load();
    scope.querySelectorAll("section.card[id]").forEach(function (section) {
      var heading = section.querySelector("h2");
      if (!heading || section.querySelector(":scope > .dash-fold")) {
        return;
      }
      // The heading's own child of the section stays visible when folded; everything else hides.
      var head = heading;
      while (head.parentElement && head.parentElement !== section) {
        head = head.parentElement;
      }
      head.classList.add("dash-section-head");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "dash-fold";
      button.setAttribute("aria-controls", section.id);
      button.setAttribute("aria-label", "Hide or show: " + heading.textContent.trim());
      head.insertAdjacentElement("beforebegin", button);
      button.classList.add("dash-section-head");
      setFolded(section, button, folded.indexOf(section.id) !== -1);
      button.addEventListener("click", function () {
        var now = load().filter(function (id) { return id !== section.id; });
        var fold = !section.classList.contains("is-folded");
        if (fold) {
          now.push(section.id);
        }
        save(now);
        setFolded(section, button, fold);
      });
    });
  }

  // A link of the index opens a folded section it points to.
  document.querySelectorAll("#dash-index a[href^='#']").forEach(function (link) {
    link.addEventListener("click", function () {
      var section = document.getElementById(link.getAttribute("href").slice(1));
      var button = section && section.querySelector(":scope > .dash-fold");
      if (button && section.classList.contains("is-folded")) {
        button.click();
      }
    });
  });

  if (root) {
    prepare(root);
    // htmx:load fires on the new content, inside the page (an outerHTML swap's afterSwap fires on the old,
    // detached element, which never reaches the body); prepare skips sections it has already fitted.
    document.body.addEventListener("htmx:load", function () {
      prepare(root);
    });
  }
})();
