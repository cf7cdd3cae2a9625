// kerckhoffs app: the one script. While a run is in progress, poll its state and show it;
// reload the page when it finished (the page then shows its verdicts and report).
"use strict";
(function () {
  const box = document.getElementById("progress");
  if (!box) { return; }
  const job = box.dataset.job;
  const fill = box.querySelector(".fill");
  const step = document.getElementById("step");
  function poll() {
    fetch("/runs/" + job + "/status", { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        fill.style.width = s.percent + "%";
        step.textContent = s.step + " (" + s.percent + " %)";
        if (s.state === "running") { setTimeout(poll, 400); } else { window.location.reload(); }
      })
      .catch(function () { setTimeout(poll, 2000); });
  }
  poll();
})();
