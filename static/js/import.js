// Drag and drop onto the import form's file input. The input itself works without this script: a dropped file is
// put into it (DataTransfer), so the form posts exactly what a click on the input would have chosen.
(function () {
  "use strict";
  const zone = document.getElementById("import-drop");
  if (!zone) return;
  const input = zone.querySelector('input[type="file"]');
  const name = document.getElementById("import-file-name");
  const show = function () {
    const file = input.files && input.files[0];
    name.textContent = file ? "Chosen: " + file.name + " (" + Math.max(1, Math.round(file.size / 1024)) + " KB)" : "";
  };
  input.addEventListener("change", show);
  ["dragenter", "dragover"].forEach(function (type) {
    zone.addEventListener(type, function (event) {
      event.preventDefault();
      zone.classList.add("is-over");
    });
  });
  ["dragleave", "drop"].forEach(function (type) {
    zone.addEventListener(type, function () {
      zone.classList.remove("is-over");
    });
  });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    if (!event.dataTransfer || !event.dataTransfer.files.length) return;
    const chosen = new DataTransfer();
    chosen.items.add(event.dataTransfer.files[0]);
    input.files = chosen.files;
    show();
  });
})();
