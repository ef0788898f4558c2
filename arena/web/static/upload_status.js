// An upload being checked: reload the page once the check is over.
(function () {
  "use strict";
  var status = document.getElementById("status");
  if (!status) { return; }
  function poll() {
    fetch(status.getAttribute("data-source"), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (data && data.status !== "checking") { window.location.reload(); return; }
        setTimeout(poll, 1500);
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  setTimeout(poll, 1500);
})();
