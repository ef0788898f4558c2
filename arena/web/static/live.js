// The leaderboard updates itself while matches are played: it polls the JSON twin and,
// when the number of finished matches (or the final evaluation's state) changed, swaps in
// the table rendered by the server.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) { return; }
  var done = live.getAttribute("data-done");
  function stateOf(data) {  // as the template writes data-done
    return String(data.matches_done) + "|" + (data.final ? "final" : data.final_phase ? "phase" : "");
  }
  function poll() {
    fetch(live.getAttribute("data-source"), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data || stateOf(data) === done) { return null; }
        done = stateOf(data);
        return fetch(live.getAttribute("data-fragment"), { credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) {
            if (html === null) { return; }
            // server-rendered and escaped by the template engine: the same markup as a reload
            var doc = new DOMParser().parseFromString(html, "text/html");
            live.replaceChildren.apply(live, Array.prototype.slice.call(doc.body.childNodes));
            live.setAttribute("data-done", done);
          });
      })
      .catch(function () { /* the server restarts: try again next time */ })
      .then(function () { setTimeout(poll, 3000); });
  }
  setTimeout(poll, 3000);
})();
