/* Big Two Arena: the match replay viewer (templates/match.html).
 *
 * Reads the JSON block #replay-data (arena/web/replay_data.py: the record, re-validated by
 * the engine) and draws one position of the match: every seat's remaining cards face up
 * around the table, the trick in the middle, passes and lock-outs, whose turn it is, the
 * hand's scores at its end.  A position is (hand, turn): turn 0 is the deal, turn k the
 * state after the hand's k-th move.  The address #hand=H&turn=T (H from 1) opens one and
 * is kept up to date, so a position can be shared.
 *
 * Everything in the data is someone else's text (bot names, fault details): it is only
 * ever put into the page with textContent / createElement, never as HTML. */
(function () {
  "use strict";

  var source = document.getElementById("replay-data");
  if (!source) return;
  var R = JSON.parse(source.textContent);
  var hands = R.hands || [];
  var players = R.players || 4;

  var C = window.ArenaCards;  // static/cards.js
  var el = C.el, clear = C.clear, cardLabel = C.cardLabel, cardsText = C.cardsText;
  var cardEl = C.cardEl, signed = C.signed;

  var state = { hand: 0, turn: 0, playing: false, timer: null };

  // ----- small DOM helpers ----------------------------------------------------------------
  function seatName(s) {
    var seat = (R.seats || [])[s];
    return seat ? seat.name : "seat " + s;
  }

  function short(text, n) {
    return text.length > n ? text.slice(0, n - 1) + "\u2026" : text;
  }

  // ----- the table, built once ------------------------------------------------------------
  /* Where each seat sits: seat 0 at the bottom, the next seats in the order of play. */
  function positions() {
    var ccw = R.direction === "counter-clockwise";
    if (players === 2) return ["bottom", "top"];
    if (players === 3) return ccw ? ["bottom", "right", "left"] : ["bottom", "left", "right"];
    return ccw ? ["bottom", "right", "top", "left"] : ["bottom", "left", "top", "right"];
  }

  var table = document.getElementById("table");
  var seatNodes = [];
  var pos = positions();
  for (var s = 0; s < players; s++) {
    var box = el("section", "seat pos-" + pos[s]);
    box.id = "seat-" + s;
    box.setAttribute("data-seat", String(s));
    var head = el("div", "seat-head");
    var name = el("span", "seat-name", seatName(s));
    var seatInfo = (R.seats || [])[s];
    var meta = el("span", "seat-meta", "seat " + s + (seatInfo && seatInfo.team ? " · team " + seatInfo.team : ""));
    var badge = el("span", "seat-badge");
    var count = el("span", "seat-count");
    var score = el("span", "seat-score");
    head.appendChild(name);
    head.appendChild(meta);
    head.appendChild(badge);
    head.appendChild(count);
    head.appendChild(score);
    var handNode = el("div", "hand");
    box.appendChild(head);
    box.appendChild(handNode);
    var lastNode = el("div", "last-move");
    box.appendChild(lastNode);
    table.appendChild(box);
    seatNodes.push({ box: box, badge: badge, count: count, score: score, hand: handNode, last: lastNode });
  }
  var center = el("section", "trick-area");
  center.id = "trick-area";
  var status = el("div", "trick-status");
  status.id = "status";
  var trickNode = el("div", "trick");
  trickNode.id = "trick";
  var trickWho = el("div", "trick-who");
  trickWho.id = "trick-who";
  var trickLog = el("ol", "trick-log");
  trickLog.id = "trick-log";
  var flags = el("div", "trick-flags");
  flags.id = "flags";
  center.appendChild(status);
  center.appendChild(trickNode);
  center.appendChild(trickWho);
  center.appendChild(trickLog);
  center.appendChild(flags);
  table.appendChild(center);

  var positionNode = document.getElementById("position");
  var notes = document.getElementById("notes");
  var resultBox = document.getElementById("hand-result");
  var handSelect = document.getElementById("hand-select");
  var playButton = document.getElementById("btn-play");
  var speed = document.getElementById("speed");

  hands.forEach(function (h, i) {
    var label = "hand " + (i + 1);
    if (h.result) label += " \u00b7 " + short(seatName(h.result.winner), 24) + " wins";
    var option = el("option", null, label);
    option.value = String(i);
    handSelect.appendChild(option);
  });

  buildScoreSheet();

  // ----- one position -----------------------------------------------------------------------
  function render() {
    var h = hands[state.hand];
    if (!h) {
      positionNode.textContent = "no hand to show";
      return;
    }
    var turns = h.turns;
    var t = state.turn;
    var last = t > 0 ? turns[t - 1] : null;

    // every seat's cards: the deal minus what it has played so far
    var left = h.deal.map(function (cards) {
      var set = {};
      cards.forEach(function (c) { set[c] = true; });
      return set;
    });
    for (var i = 0; i < t; i++) {
      if (turns[i].cards) {
        turns[i].cards.forEach(function (c) { delete left[turns[i].seat][c]; });
      }
    }

    // the current trick: from its lead to this position
    var start = 0;
    for (var j = t - 1; j >= 0; j--) {
      if (turns[j].lead) { start = j; break; }
    }
    var trick = t > 0 ? turns.slice(start, t) : [];
    var won = last !== null && !!last.won;
    var over = t === turns.length && h.result !== null;
    var toMove = t === 0 ? h.leader : last.next;
    var locked = last && last.locked ? last.locked : [];
    var passed = {};
    if (!won) {
      trick.forEach(function (m) { if (!m.cards && !m.lead) passed[m.seat] = true; });
    }
    var lastOf = {};
    trick.forEach(function (m) { lastOf[m.seat] = m; });

    var before = state.hand > 0 && hands[state.hand - 1].result ? hands[state.hand - 1].result.cumulative : null;
    for (var s = 0; s < players; s++) {
      var node = seatNodes[s];
      clear(node.hand);
      h.deal[s].forEach(function (c) {
        if (left[s][c]) node.hand.appendChild(cardEl(c));
      });
      var n = node.hand.childNodes.length;
      node.count.textContent = n + (n === 1 ? " card" : " cards");
      var total = over ? h.result.cumulative[s] : before ? before[s] : 0;
      node.score.textContent = "score " + signed(total);
      var badge = "", cls = "seat";
      if (over && h.result.winner === s) { badge = "won the hand"; cls += " winner"; }
      else if (!over && toMove === s) { badge = "to play"; cls += " to-move"; }
      else if (locked.indexOf(s) >= 0) { badge = "locked out"; cls += " locked"; }
      else if (passed[s]) { badge = "passed"; cls += " passed"; }
      node.badge.textContent = badge;
      node.box.className = cls + " pos-" + pos[s];
      var lm = lastOf[s];
      node.last.textContent = lm ? (lm.cards ? lm.label + " " + cardsText(lm.cards) : lm.label) : "";
    }

    // the trick in the middle: the play to beat, who made it, and the trick's moves
    clear(trickNode);
    clear(trickLog);
    var top = null;
    trick.forEach(function (m) { if (m.cards) top = m; });
    if (top) top.cards.forEach(function (c) { trickNode.appendChild(cardEl(c)); });
    trickNode.className = "trick" + (won ? " won" : "");
    trickWho.textContent = top ? seatName(top.seat) + ": " + top.label : t === 0 ? "" : "no play yet";
    trick.forEach(function (m) {
      var item = el("li", m.cards ? "play" : "pass");
      item.appendChild(el("span", "who", seatName(m.seat)));
      item.appendChild(document.createTextNode(" "));
      item.appendChild(el("span", "what", m.cards ? m.label + " " + cardsText(m.cards) : m.label));
      if (m.by_referee) item.appendChild(el("span", "referee", " (played by the referee)"));
      trickLog.appendChild(item);
    });
    trickLog.scrollTop = trickLog.scrollHeight; // the latest move in view

    if (over) {
      status.textContent = seatName(h.result.winner) + " is out: hand " + (state.hand + 1) + " over";
    } else if (t === 0) {
      status.textContent = seatName(h.leader) + " leads" + (h.must_include ? " and must play " + cardLabel(h.must_include) : "");
    } else if (won) {
      status.textContent = "Trick won by " + seatName(toMove) + ", who leads next";
    } else {
      status.textContent = seatName(toMove) + " to play";
    }
    var flagText = [];
    if (locked.length) flagText.push("locked out: " + locked.map(seatName).join(", "));
    if (last && last.reversed) flagText.push("revolution: the order is reversed");
    flags.textContent = flagText.join(" · ");

    renderNotes(h, t, last);
    renderResult(h, over);

    positionNode.textContent = "hand " + (state.hand + 1) + "/" + hands.length + " \u00b7 turn " + t + "/" + turns.length;
    handSelect.value = String(state.hand);
    document.getElementById("btn-back").disabled = state.hand === 0 && t === 0;
    document.getElementById("btn-forward").disabled = atEnd();
    var hash = "#hand=" + (state.hand + 1) + "&turn=" + t;
    if (location.hash !== hash && history.replaceState) history.replaceState(null, "", hash);
  }

  /* The move just played (with its record turn id) and any fault the referee recorded
   * before it (the move is then the referee's). */
  function renderNotes(h, t, last) {
    clear(notes);
    if (last) {
      var line = el("p", "note-move");
      line.appendChild(el("span", "turn-id", "turn " + last.id + ": "));
      var verb = last.cards ? (last.lead ? "leads " : "plays ") + last.label + " " + cardsText(last.cards) : last.label;
      line.appendChild(document.createTextNode(seatName(last.seat) + " " + verb));
      if (last.cards) line.appendChild(document.createTextNode(last.left ? " (" + last.left + " left)" : " \u2014 out!"));
      if (last.by_referee) line.appendChild(el("span", "referee", " \u00b7 played by the referee"));
      notes.appendChild(line);
    }
    (R.faults || []).forEach(function (f) {
      var here = f.hand === state.hand && (f.at === t - 1 || (t === h.turns.length && f.at >= t));
      if (f.hand === null && state.hand === 0 && t === 0) here = true;
      if (!here) return;
      var p = el("p", "note-fault fault");
      p.appendChild(el("strong", null, "\u26a0 fault "));
      p.appendChild(document.createTextNode(
        (f.seat === null ? "?" : seatName(f.seat)) + ": " + f.kind + ": " +
        /* the bot's own words for its owner's eyes only; the referee's fixed words for all */
        (f.detail !== null && f.detail !== undefined ? f.detail : f.reason) +
        (f.strike ? " [strike " + f.strikes + "]" : "") + (f.forfeited ? " \u2014 the seat forfeits" : "")));
      notes.appendChild(p);
    });
  }

  function renderResult(h, over) {
    clear(resultBox);
    resultBox.hidden = !over;
    if (!over) return;
    var r = h.result;
    resultBox.appendChild(el("h2", null, "Hand " + (state.hand + 1) + ": " + seatName(r.winner) + " wins"));
    var tbl = el("table", "data");
    var head = el("tr");
    ["seat", "cards left", "penalty", "hand score", "total"].forEach(function (c, i) {
      head.appendChild(el("th", i ? "num" : null, c));
    });
    tbl.appendChild(head);
    for (var s = 0; s < players; s++) {
      var row = el("tr", r.winner === s ? "winner" : null);
      row.appendChild(el("td", null, seatName(s)));
      row.appendChild(el("td", "num", r.cards_left[s]));
      row.appendChild(el("td", "num", r.penalties[s]));
      row.appendChild(el("td", "num", signed(r.scores[s])));
      row.appendChild(el("td", "num", signed(r.cumulative[s])));
      tbl.appendChild(row);
    }
    resultBox.appendChild(tbl);
  }

  function buildScoreSheet() {
    var box = document.getElementById("score-sheet");
    if (!box) return;
    var tbl = el("table", "data");
    var head = el("tr");
    head.appendChild(el("th", null, "hand"));
    head.appendChild(el("th", null, "winner"));
    for (var s = 0; s < players; s++) head.appendChild(el("th", "num", seatName(s)));
    tbl.appendChild(head);
    hands.forEach(function (h, i) {
      if (!h.result) return;
      var row = el("tr");
      var cell = el("td");
      var link = el("a", null, String(i + 1));
      link.href = "#hand=" + (i + 1) + "&turn=" + h.turns.length;
      cell.appendChild(link);
      row.appendChild(cell);
      row.appendChild(el("td", null, seatName(h.result.winner)));
      for (var s2 = 0; s2 < players; s2++) {
        row.appendChild(el("td", "num", signed(h.result.scores[s2]) + " (" + signed(h.result.cumulative[s2]) + ")"));
      }
      tbl.appendChild(row);
    });
    if (R.final) {
      var total = el("tr", "total");
      total.appendChild(el("td", null, "final"));
      total.appendChild(el("td"));
      for (var s3 = 0; s3 < players; s3++) {
        total.appendChild(el("td", "num", signed(R.final.scores[s3]) + " · place " + R.final.places[s3]));
      }
      tbl.appendChild(total);
    }
    box.appendChild(tbl);
  }

  // ----- moving -------------------------------------------------------------------------------
  function atEnd() {
    return state.hand >= hands.length - 1 && (!hands.length || state.turn >= hands[state.hand].turns.length);
  }

  function go(hand, turn) {
    if (!hands.length) return;
    hand = Math.max(0, Math.min(hands.length - 1, hand));
    turn = Math.max(0, Math.min(hands[hand].turns.length, turn));
    state.hand = hand;
    state.turn = turn;
    render();
  }

  function forward() {
    var h = hands[state.hand];
    if (!h) return false;
    if (state.turn < h.turns.length) go(state.hand, state.turn + 1);
    else if (state.hand < hands.length - 1) go(state.hand + 1, 0);
    else return false;
    return true;
  }

  function back() {
    if (state.turn > 0) go(state.hand, state.turn - 1);
    else if (state.hand > 0) go(state.hand - 1, hands[state.hand - 1].turns.length);
  }

  function tick() {
    if (!state.playing) return;
    if (!forward() || atEnd()) { pause(); return; }
    state.timer = setTimeout(tick, Number(speed.value) || 800);
  }

  function play() {
    if (atEnd()) go(0, 0);
    state.playing = true;
    playButton.textContent = "\u23f8 pause";
    playButton.classList.add("playing");
    clearTimeout(state.timer);
    state.timer = setTimeout(tick, Number(speed.value) || 800);
  }

  function pause() {
    state.playing = false;
    clearTimeout(state.timer);
    playButton.textContent = "\u25b6 play";
    playButton.classList.remove("playing");
  }

  function toggle() {
    if (state.playing) pause(); else play();
  }

  /* #hand=H&turn=T (H from 1, T from 0) -> [hand index, turn]; null when absent. */
  function fromHash() {
    var m = /^#?(?:.*&)?hand=(\d+)(?:&turn=(\d+))?/.exec(location.hash);
    if (!m) return null;
    return [parseInt(m[1], 10) - 1, m[2] === undefined ? 0 : parseInt(m[2], 10)];
  }

  function on(id, handler) {
    document.getElementById(id).addEventListener("click", function (event) {
      handler();
      event.currentTarget.blur(); // the keys go on stepping, not pressing this button again
    });
  }

  on("btn-first", function () { pause(); go(state.hand, 0); });
  on("btn-back", function () { pause(); back(); });
  on("btn-play", toggle);
  on("btn-forward", function () { pause(); forward(); });
  on("btn-last", function () { pause(); go(state.hand, hands[state.hand] ? hands[state.hand].turns.length : 0); });
  handSelect.addEventListener("change", function () {
    pause();
    go(Number(handSelect.value), 0);
    handSelect.blur();
  });
  speed.addEventListener("change", function () { speed.blur(); });

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    var key = event.key;
    if (key === "ArrowRight") { pause(); forward(); }
    else if (key === "ArrowLeft") { pause(); back(); }
    else if (key === " " || key === "Spacebar") toggle();
    else if (key === "Home") { pause(); go(state.hand, 0); }
    else if (key === "End") { pause(); go(state.hand, hands[state.hand] ? hands[state.hand].turns.length : 0); }
    else if (key === "PageDown") { pause(); go(state.hand + 1, 0); }
    else if (key === "PageUp") { pause(); go(state.hand - 1, 0); }
    else return;
    event.preventDefault();
  });

  window.addEventListener("hashchange", function () {
    var at = fromHash();
    if (at) { pause(); go(at[0], at[1]); }
  });

  document.getElementById("controls").hidden = false;
  var start = fromHash();
  if (start) go(start[0], start[1]); else go(0, 0);
  if (!hands.length) render();
})();
