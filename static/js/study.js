// The end page's "Copy code" buttons: the code goes to the clipboard, and the status line says so (or says to
// select it by hand where the browser refuses clipboard access, e.g. on plain HTTP).
(function () {
  "use strict";
  var gettext = window.gettext || function (text) { return text; };
  var status = document.getElementById("copy-status");
  document.querySelectorAll("button.copy-code").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      var code = source ? source.textContent.trim() : "";
      var say = function (text) { if (status) { status.textContent = text; } };
      if (!navigator.clipboard || !code) {
        say(gettext("Select the code and copy it by hand."));
        return;
      }
      navigator.clipboard.writeText(code).then(
        function () { say(gettext("Copied:") + " " + code); },
        function () { say(gettext("Select the code and copy it by hand.")); }
      );
    });
  });
})();
