// The study-link form's attention-check picker: typing in the search box hides the gold items that do not match
// (by id or prompt). Without JavaScript every gold item is listed and can be ticked.
(function () {
  "use strict";
  const filter = document.getElementById("attention-filter");
  const list = document.getElementById("attention-list");
  if (!filter || !list) return;
  filter.addEventListener("input", function () {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const row of list.querySelectorAll("li")) {
      const text = row.dataset.search || "";
      const checked = row.querySelector("input:checked") !== null;
      row.hidden = !checked && !words.every(function (word) { return text.includes(word); });
    }
  });
})();
