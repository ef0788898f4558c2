/* Big Two Arena: the Play page (templates/play.html), a person's seat at a table of bots.
 *
 * The referee runs the match; this page only shows what the server relays over the table's
 * WebSocket (the protocol of issue 12: hello, then every update so far, then live ones) and
 * sends the person's choices back.  The page never judges a move itself beyond one thing:
 * Play is enabled only when the selection is exactly one of the turn's legal plays, which
 * the server listed (the engine's own list); every other selection is classified by the
 * server ("check") in the engine's words.  Cards keep the order the server sends (the rule
 * set's order, weakest first).
 *
 * Everything a bot or participant wrote (names, fault details) goes into the page with
 * textContent only.  No inline script: the data arrives in the JSON block #table-data.
 *
 * For the latency test, window.arenaPlay.moves gets one entry per move update:
 * {seat, cards, t (server epoch ms when relayed), dom (epoch ms right after its cards were
 * put in the DOM), shown (epoch ms in the next animation frame, i.e. the frame that paints
 * them), queued (true when it waited behind the hand-end panel or the replay)}. */
(function () {
  "use strict";

  /* The "start a game" form (play_new.html): one opponent per other seat, and the seat
     among the table's seats; the fields a smaller table does not use are disabled. */
  var form = document.getElementById("play-new-form");
  if (form) {
    var playersSel = document.getElementById("players"), seatSel = document.getElementById("seat");
    var fitForm = function () {
      var n = Number(playersSel.value) || 4;
      for (var i = 0; i < 3; i++) {
        var o = document.getElementById("opponent-" + i);
        if (o) { o.disabled = i >= n - 1; o.hidden = i >= n - 1; }
      }
      Array.prototype.forEach.call(seatSel.options, function (opt) {
        opt.disabled = Number(opt.value) >= n;
      });
      if (Number(seatSel.value) >= n) seatSel.value = "0";
    };
    playersSel.addEventListener("change", fitForm);
    fitForm();
  }

  var source = document.getElementById("table-data");
  if (!source) return;
  var T = JSON.parse(source.textContent);
  var ME = T.seat;
  var N = T.players;
  var AUTO_CONTINUE_MS = 6000;
  var C = window.ArenaCards;  // static/cards.js
  var el = C.el, clear = C.clear, cardLabel = C.cardLabel, cardsText = C.cardsText;
  var cardEl = C.cardEl, signed = C.signed;

  window.arenaPlay = { moves: [] };

  // ----- small helpers --------------------------------------------------------------------
  function $(id) { return document.getElementById(id); }

  function epochNow() { return performance.timeOrigin + performance.now(); }

  function sameCards(a, b) {
    if (!a || !b || a.length !== b.length) return false;
    var x = a.slice().sort(), y = b.slice().sort();
    for (var i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    return true;
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  // ----- state ----------------------------------------------------------------------------
  var S;          // the match as folded from the updates (reset on every hello)
  var names = (T.names || []).slice();

  function freshState() {
    return {
      hand: -1,                 // hand number (from 0)
      cards: [],                // my cards, in the server's order
      cardsLeft: [],
      locked: [],
      passed: {},               // seats that passed in this trick
      last: {},                 // seat -> label of its last move in this trick
      trick: null,              // {cards, label, seat}
      next: -1,                 // the seat to move
      turn: null,               // my open turn (the server's turn update) or null
      sentTurn: null,           // turn_id sent and not yet answered by a move
      cumulative: [],
      finished: false,
      closed: false
    };
  }
  S = freshState();

  var selection = [];           // selected card texts
  var focusIndex = 0;
  var hintCards = [];
  var requestId = 0, lastCheckId = 0, lastHintId = 0;
  var checkReply = null;        // the reply to the latest check
  var replaying = false, replayTimer = null;
  var paused = false, queue = [], continueTimer = null, continueTick = null;
  var clockOffset = 0;          // server ms − local ms
  var clockTimer = null;

  // ----- the table, built once ------------------------------------------------------------
  function positions() {
    var ccw = (T.rules && T.rules.direction) === "counter-clockwise";
    if (N === 2) return ["bottom", "top"];
    if (N === 3) return ccw ? ["bottom", "right", "left"] : ["bottom", "left", "right"];
    return ccw ? ["bottom", "right", "top", "left"] : ["bottom", "left", "top", "right"];
  }

  var felt = $("felt");
  var seatNodes = [];
  var pos = positions();
  for (var s = 0; s < N; s++) {
    var rel = (s - ME + N) % N;
    var box = s === ME ? $("my-seat") : el("section", "seat opp pos-" + pos[rel]);
    box.id = "seat-" + s;
    box.setAttribute("data-seat", String(s));
    box.setAttribute("data-rel", String(rel));
    var head = s === ME ? $("my-head") : el("div", "seat-head");
    var nameNode = el("span", "seat-name", names[s] || "seat " + s);
    nameNode.setAttribute("title", names[s] || "");
    var count = el("span", "seat-count");
    var badge = el("span", "seat-badge");
    var alertNode = el("span", "seat-alert");
    head.insertBefore(alertNode, head.firstChild);
    head.insertBefore(badge, head.firstChild);
    head.insertBefore(count, head.firstChild);
    head.insertBefore(nameNode, head.firstChild);
    var backs = null, lastNode = null;
    if (s !== ME) {
      box.appendChild(head);
      backs = el("div", "backs");
      backs.setAttribute("aria-hidden", "true");
      box.appendChild(backs);
      lastNode = el("div", "last-move");
      box.appendChild(lastNode);
      felt.appendChild(box);
    } else {
      lastNode = $("my-last");
    }
    seatNodes.push({ box: box, name: nameNode, count: count, badge: badge, alert: alertNode,
                     backs: backs, last: lastNode });
  }

  var handNode = $("my-hand");
  var selLine = $("selection");
  var playBtn = $("btn-play"), passBtn = $("btn-pass"), hintBtn = $("btn-hint");
  var hintSelect = $("hint-bot");
  var clockNode = $("clock"), clockBar = $("clock-bar"), clockText = $("clock-text");
  var statusNode = $("status"), trickNode = $("trick"), trickLabel = $("trick-label");
  var noticeNode = $("notice"), historyNode = $("history"), connNode = $("conn");
  var handEnd = $("hand-end"), matchEnd = $("match-end");

  // ----- drawing --------------------------------------------------------------------------
  function drawSeats() {
    for (var s = 0; s < N; s++) {
      var n = seatNodes[s];
      var left = S.cardsLeft[s];
      n.count.textContent = left === undefined ? "" : plural(left, "card");
      var locked = S.locked.indexOf(s) >= 0;
      var badge = "";
      if (S.finished) badge = "";
      else if (S.next === s) badge = s === ME ? "your turn" : "to move";
      else if (locked) badge = "locked out";
      else if (S.passed[s]) badge = "passed";
      n.badge.textContent = badge;
      n.alert.textContent = left === 1 ? "one card!" : "";
      n.box.classList.toggle("to-move", S.next === s && !S.finished);
      n.box.classList.toggle("locked", locked);
      n.box.classList.toggle("passed", !!S.passed[s] && !locked);
      n.box.classList.toggle("alert", left === 1);
      n.last.textContent = S.last[s] || "";
      if (n.backs) {
        var want = Math.max(0, Math.min(left || 0, 13));
        while (n.backs.childNodes.length > want) n.backs.removeChild(n.backs.lastChild);
        while (n.backs.childNodes.length < want) n.backs.appendChild(el("span", "back"));
      }
    }
  }

  function drawTrick() {
    clear(trickNode);
    if (S.trick) {
      S.trick.cards.forEach(function (c) { trickNode.appendChild(cardEl(c)); });
      trickLabel.textContent = S.trick.label + " \u2014 " + (names[S.trick.seat] || "seat " + S.trick.seat);
    } else {
      trickLabel.textContent = S.hand < 0 ? "" : "no trick: the next play leads";
    }
    if (S.reversed) trickLabel.textContent += " \u00b7 revolution: the order of ranks is reversed";
    var status = "";
    if (S.finished) status = "The match is over";
    else if (S.next === ME) status = "Your turn";
    else if (S.next >= 0) status = (names[S.next] || "seat " + S.next) + " to play";
    statusNode.textContent = status;
  }

  var drawnCards = "";

  /* My hand: rebuilt only when its cards change (so a card keeps its node and focus while
     the selection changes); selection, hint and focus are attributes. */
  function drawHand(keepFocus) {
    var hadFocus = keepFocus && handNode.contains(document.activeElement);
    if (focusIndex >= S.cards.length) focusIndex = Math.max(0, S.cards.length - 1);
    var key = S.cards.join(" ");
    if (key !== drawnCards) {
      clear(handNode);
      S.cards.forEach(function (code, i) {
        var b = cardEl(code, "button");
        b.type = "button";
        b.classList.add("mine");
        b.setAttribute("aria-label", cardLabel(code));
        b.setAttribute("data-index", String(i));
        handNode.appendChild(b);
      });
      drawnCards = key;
    }
    Array.prototype.forEach.call(handNode.childNodes, function (b, i) {
      var code = S.cards[i];
      var on = selection.indexOf(code) >= 0;
      b.setAttribute("aria-pressed", on ? "true" : "false");
      b.classList.toggle("selected", on);
      b.classList.toggle("hinted", hintCards.indexOf(code) >= 0);
      b.tabIndex = i === focusIndex ? 0 : -1;
    });
    if (hadFocus && handNode.childNodes[focusIndex]) handNode.childNodes[focusIndex].focus();
  }

  function legalMatch() {
    if (!S.turn || S.sentTurn === S.turn.turn_id) return null;
    var legal = S.turn.legal || [];
    for (var i = 0; i < legal.length; i++) {
      if (legal[i].cards && sameCards(legal[i].cards, selection)) return legal[i];
    }
    return null;
  }

  function canPass() {
    if (!S.turn || S.sentTurn === S.turn.turn_id) return false;
    return (S.turn.legal || []).some(function (m) { return m.cards === null; });
  }

  function drawControls() {
    var match = legalMatch();
    playBtn.disabled = !match;
    passBtn.disabled = !canPass();
    hintBtn.disabled = !S.turn || S.finished;
    var text = "", cls = "";
    if (!selection.length) {
      if (S.turn && S.sentTurn !== S.turn.turn_id) {
        text = S.turn.to_beat_label ? "Beat " + S.turn.to_beat_label + ", or pass" : "You lead: choose cards";
        if (S.turn.must_include) text += " (the opening lead must include " + cardLabel(S.turn.must_include) + ")";
      } else if (S.turn) {
        text = "Sent\u2026";
      }
    } else if (match) {
      text = match.label;
      cls = "ok";
    } else if (checkReply && sameCards(checkReply.cards || [], selection)) {
      text = checkReply.label + (checkReply.why && !checkReply.playable ? ": " + checkReply.why : "");
      cls = checkReply.label === "not a combination" || (checkReply.why && S.turn) ? "bad" : "";
    } else {
      text = cardsText(selection) + "\u2026";
    }
    selLine.textContent = text;
    selLine.className = "selection " + cls;
  }

  function drawAll() {
    drawSeats();
    drawTrick();
    drawHand(true);
    drawControls();
  }

  function notice(text, kind) {
    var p = el("p", "notice-item " + (kind || ""), text);
    noticeNode.appendChild(p);
    while (noticeNode.childNodes.length > 3) noticeNode.removeChild(noticeNode.firstChild);
  }

  function addHistory(text, cls) {
    var li = el("li", cls || "", text);
    historyNode.appendChild(li);
    historyNode.scrollTop = historyNode.scrollHeight;
    return li;
  }

  // ----- the countdown --------------------------------------------------------------------
  function tickClock() {
    if (!S.turn || S.finished) {
      clockNode.hidden = true;
      return;
    }
    var t = S.turn;
    var total = (t.move_ms || 0) + (t.bank_ms || 0);
    var deadline = (t.sent || 0) + total - clockOffset;  // local epoch ms
    var left = Math.max(0, deadline - Date.now());
    clockNode.hidden = false;
    var secs = Math.min(Math.ceil(left / 1000), Math.ceil(total / 1000));
    clockText.textContent = Math.floor(secs / 60) + ":" + ("0" + (secs % 60)).slice(-2);
    clockBar.style.width = (total ? Math.max(0, Math.min(100, 100 * left / total)) : 0) + "%";
    clockNode.classList.toggle("low", left < 10000);
  }

  function startClock() {
    tickClock();
    if (!clockTimer) clockTimer = setInterval(tickClock, 250);
  }

  // ----- selection, checks, hints ---------------------------------------------------------
  function send(obj) {
    if (sock && sock.readyState === WebSocket.OPEN) {
      sock.send(JSON.stringify(obj));
      return true;
    }
    return false;
  }

  function selectionChanged() {
    // keep the selection in the hand's order
    selection = S.cards.filter(function (c) { return selection.indexOf(c) >= 0; });
    checkReply = null;
    if (selection.length && !legalMatch()) {
      lastCheckId = ++requestId;
      send({ type: "check", cards: selection.slice(), id: lastCheckId });
    }
    drawHand(true);
    drawControls();
  }

  function toggle(code) {
    var i = selection.indexOf(code);
    if (i >= 0) selection.splice(i, 1); else selection.push(code);
    selectionChanged();
  }

  function play() {
    var match = legalMatch();
    if (!match) {
      // nothing is sent: the line says why (the server's check, in the engine's words)
      if (selection.length && !checkReply) selectionChanged();
      selLine.classList.add("bad");
      return;
    }
    S.sentTurn = S.turn.turn_id;
    send({ type: "play", turn_id: S.turn.turn_id, cards: match.cards.slice() });
    drawControls();
  }

  function pass() {
    if (!canPass()) return;
    S.sentTurn = S.turn.turn_id;
    send({ type: "pass", turn_id: S.turn.turn_id });
    drawControls();
  }

  function hint() {
    if (!S.turn) return;
    lastHintId = ++requestId;
    send({ type: "hint", bot: hintSelect.value, id: lastHintId });
  }

  handNode.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("button.card") : null;
    if (!b) return;
    focusIndex = Number(b.getAttribute("data-index")) || 0;
    toggle(b.getAttribute("data-card"));
  });
  playBtn.addEventListener("click", play);
  passBtn.addEventListener("click", pass);
  hintBtn.addEventListener("click", hint);

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var t = ev.target;
    var tag = t && t.tagName;
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA") return;
    var onCard = t && t.classList && t.classList.contains("mine");
    var onOtherButton = (tag === "BUTTON" || tag === "A") && !onCard;
    var key = ev.key;
    if (key === "ArrowLeft" || key === "ArrowRight") {
      if (!S.cards.length) return;
      ev.preventDefault();
      var step = key === "ArrowLeft" ? -1 : 1;
      if (onCard) focusIndex = Math.max(0, Math.min(S.cards.length - 1, focusIndex + step));
      drawHand(false);
      if (handNode.childNodes[focusIndex]) handNode.childNodes[focusIndex].focus();
    } else if (key === " " || key === "Spacebar") {
      if (onOtherButton || !S.cards.length) return;
      ev.preventDefault();
      toggle(S.cards[Math.min(focusIndex, S.cards.length - 1)]);
    } else if (key === "Enter") {
      if (onOtherButton) return;
      ev.preventDefault();
      play();
    } else if (key === "p" || key === "P") {
      ev.preventDefault();
      pass();
    } else if (key === "h" || key === "H") {
      ev.preventDefault();
      hint();
    } else if (key === "Escape") {
      if (!handEnd.hidden && paused) { resume(); return; }
      selection = [];
      selectionChanged();
    }
  });

  // ----- the hand-end and match-end panels ------------------------------------------------
  function whoCell(s) {
    var td = el("td", "who", names[s] || "seat " + s);
    if (s === ME && names[s] !== "you") td.appendChild(el("span", "muted", " (you)"));
    return td;
  }

  function seatWords(s, verb, verbYou) {
    return s === ME ? "You " + verbYou : (names[s] || "seat " + s) + " " + verb;
  }

  function showHandEnd(m) {
    var box = $("hand-end-body");
    clear(box);
    $("hand-end-title").textContent = "Hand " + (m.hand + 1) + ": " + seatWords(m.winner, "wins", "win");
    var tbl = el("table", "data hand-table");
    var hr = el("tr");
    ["Seat", "Cards left", "Penalty", "Points", "Total"].forEach(function (h, i) {
      hr.appendChild(el("th", (i >= 2 ? "num" : "") + (i === 2 ? " pen" : ""), h));
    });
    var thead = el("thead"); thead.appendChild(hr); tbl.appendChild(thead);
    var tb = el("tbody");
    for (var s = 0; s < N; s++) {
      var tr = el("tr", s === m.winner ? "winner" : "");
      if (s === ME) tr.classList.add("me");
      tr.appendChild(whoCell(s));
      var cell = el("td", "left-cards");
      var cards = (m.hands || [])[s] || [];
      if (!cards.length) cell.appendChild(el("span", "muted", "none"));
      var row = el("span", "mini-hand");
      cards.forEach(function (c) { row.appendChild(cardEl(c)); });
      cell.appendChild(row);
      tr.appendChild(cell);
      tr.appendChild(el("td", "num pen", (m.penalties || [])[s] === undefined ? "" : m.penalties[s]));
      tr.appendChild(el("td", "num", (m.scores || [])[s] === undefined ? "" : signed(m.scores[s])));
      tr.appendChild(el("td", "num", (m.cumulative || [])[s] === undefined ? "" : m.cumulative[s]));
      tb.appendChild(tr);
    }
    tbl.appendChild(tb);
    var wrap = el("div", "scroll"); wrap.appendChild(tbl);
    box.appendChild(wrap);
    handEnd.hidden = false;
  }

  function pauseForHandEnd() {
    paused = true;
    var until = Date.now() + AUTO_CONTINUE_MS;
    var btn = $("btn-continue");
    btn.hidden = false;
    function tick() {
      var left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
      btn.textContent = "Continue (" + left + ")";
      if (Date.now() >= until) resume();
    }
    tick();
    continueTick = setInterval(tick, 250);
    btn.focus();
  }

  function resume() {
    if (continueTick) { clearInterval(continueTick); continueTick = null; }
    $("btn-continue").hidden = true;
    if (!S.finished) handEnd.hidden = true;
    paused = false;
    var q = queue; queue = [];
    q.forEach(function (m) { m.__queued = true; apply(m); });
    if (!paused && handNode.childNodes[focusIndex]) handNode.childNodes[focusIndex].focus();
  }

  function showMatchEnd(m) {
    var body = $("match-end-body");
    clear(body);
    var order = [];
    for (var s = 0; s < N; s++) order.push(s);
    var places = m.places || [];
    order.sort(function (a, b) { return (places[a] || 0) - (places[b] || 0) || a - b; });
    var tbl = el("table", "data standings");
    var hr = el("tr");
    ["Place", "Seat", "Score"].forEach(function (h, i) { hr.appendChild(el("th", i !== 1 ? "num" : "", h)); });
    var thead = el("thead"); thead.appendChild(hr); tbl.appendChild(thead);
    var tb = el("tbody");
    order.forEach(function (s) {
      var tr = el("tr", s === ME ? "me" : "");
      tr.appendChild(el("td", "num", places[s] === undefined ? "" : places[s]));
      var who = whoCell(s);
      if ((m.forfeited || [])[s]) who.appendChild(el("span", "forfeit", " forfeited"));
      tr.appendChild(who);
      tr.appendChild(el("td", "num", (m.scores || [])[s] === undefined ? "" : m.scores[s]));
      tb.appendChild(tr);
    });
    tbl.appendChild(tb);
    body.appendChild(tbl);
    var link = $("replay-link");
    link.href = m.replay_url || T.replay_url;
    var mine = places[ME];
    $("match-end-title").textContent = mine === 1 ? "You won the match" : "Match over: you placed " + (mine || "?");
    matchEnd.hidden = false;
  }

  // ----- applying updates -----------------------------------------------------------------
  function moveText(m) {
    var who = names[m.seat] || "seat " + m.seat;
    return who + ": " + (m.label || (m.cards ? cardsText(m.cards) : "pass"));
  }

  function apply(m) {
    switch (m.type) {
      case "hand_start":
        S.hand = m.hand;
        S.cards = (m.cards || []).slice();
        S.cardsLeft = (m.cards_left || []).slice();
        S.locked = [];
        S.passed = {};
        S.last = {};
        S.trick = null;
        S.next = m.leader === undefined ? -1 : m.leader;
        S.turn = null;
        selection = []; hintCards = []; checkReply = null;
        addHistory("Hand " + (m.hand + 1), "hand-sep");
        handEnd.hidden = true;
        drawAll();
        break;
      case "turn":
        S.turn = m;
        S.reversed = !!m.reversed;
        S.cards = (m.cards || S.cards).slice();
        if (m.cards_left) S.cardsLeft = m.cards_left.slice();
        if (m.locked_out) S.locked = m.locked_out.slice();
        S.next = ME;
        hintCards = [];
        selection = S.cards.filter(function (c) { return selection.indexOf(c) >= 0; });
        checkReply = null;
        drawAll();
        startClock();
        if (selection.length && !legalMatch()) selectionChanged();
        break;
      case "move": {
        var lead = !!m.lead;
        if (lead) { S.passed = {}; S.last = {}; }
        if (m.cards) {
          S.trick = { cards: m.cards.slice(), label: m.label || cardsText(m.cards), seat: m.seat };
          delete S.passed[m.seat];
        } else {
          S.passed[m.seat] = true;
        }
        S.last[m.seat] = m.cards ? (m.label || cardsText(m.cards)) : "pass";
        if (m.cards_left) S.cardsLeft = m.cards_left.slice();
        if (m.locked_out) S.locked = m.locked_out.slice();
        S.next = m.next === undefined ? -1 : m.next;
        if (m.seat === ME) {
          S.turn = null;
          S.sentTurn = null;
          if (m.cards) S.cards = S.cards.filter(function (c) { return m.cards.indexOf(c) < 0; });
          selection = []; hintCards = []; checkReply = null;
          if (m.by_referee) {
            notice(m.cards ? "Time ran out: the referee played " + cardsText(m.cards) + " for you"
                           : "Time ran out: the referee passed for you", "referee");
          }
        }
        drawSeats();
        drawTrick();
        var entry = { seat: m.seat, cards: m.cards, t: m.t, dom: epochNow(), shown: null,
                      queued: !!m.__queued || replaying, by_referee: !!m.by_referee };
        window.arenaPlay.moves.push(entry);
        requestAnimationFrame(function () { entry.shown = epochNow(); });
        if (m.seat === ME) drawHand(true);
        drawControls();
        var li = addHistory(moveText(m), m.cards ? "" : "pass");
        if (m.by_referee) li.appendChild(el("span", "referee", " (played by the referee)"));
        if (m.next === ME || m.seat === ME) tickClock();
        break;
      }
      case "trick_won":
        S.trick = null;
        S.passed = {};
        S.last = {};
        S.locked = [];
        S.next = m.seat;
        addHistory(seatWords(m.seat, "wins the trick and leads", "win the trick and lead"), "trick-won");
        drawSeats();
        drawTrick();
        break;
      case "fault":
        notice("Fault (" + m.kind + ")" + (m.detail ? ": " + m.detail : "") +
               (m.strikes ? " \u2014 strike " + m.strikes : ""), "fault");
        addHistory("fault: " + m.kind + (m.detail ? " (" + m.detail + ")" : ""), "fault");
        break;
      case "hand_end":
        S.turn = null;
        S.next = -1;
        if (m.cards_left) S.cardsLeft = m.cards_left.slice();
        S.cumulative = (m.cumulative || []).slice();
        addHistory("Hand " + (m.hand + 1) + " won by " + (names[m.winner] || "seat " + m.winner), "hand-sep");
        drawAll();
        tickClock();
        showHandEnd(m);
        if (!replaying) pauseForHandEnd();
        break;
      case "match_end":
        S.finished = true;
        S.turn = null;
        S.next = -1;
        drawAll();
        tickClock();
        showMatchEnd(m);
        break;
      case "match_start":
        if (m.names) setNames(m.names);
        break;
      case "left":
        notice("You were away longer than your move time: the referee's fallback plays your seat.", "fault");
        addHistory("you left the table: the fallback plays your seat", "fault");
        break;
      case "error":
        notice("Error: " + m.why, "fault");
        break;
      case "closed":
        S.closed = true;
        if (!S.finished) notice("The seat's stream ended.", "fault");
        break;
      default:
        break;
    }
  }

  /* What tests read: the page's state now (a getter, so a click's effect shows at once). */
  Object.defineProperty(window.arenaPlay, "state", {
    get: function () {
      return {
        hand: S.hand, turn: S.turn ? S.turn.turn_id : null, finished: S.finished, paused: paused,
        cards: S.cards.slice(), legal: S.turn ? S.turn.legal : [], sent: S.sentTurn
      };
    }
  });

  function reply(m) {
    switch (m.type) {
      case "refused":
        if (S.turn && m.turn_id === S.turn.turn_id) S.sentTurn = null;
        selLine.textContent = "Refused: " + m.why;
        selLine.className = "selection bad";
        playBtn.disabled = !legalMatch();
        passBtn.disabled = !canPass();
        return true;
      case "sent":
        return true;
      case "check":
        if (m.id !== lastCheckId) return true;
        checkReply = m;
        drawControls();
        return true;
      case "hint":
        if (m.id !== lastHintId) return true;
        hintCards = (m.cards || []).slice();
        drawHand(true);
        notice("Hint (" + m.bot + "): " + (m.label || (m.cards ? cardsText(m.cards) : "pass")), "hint");
        return true;
      case "error":
        notice("Error: " + m.why, "fault");
        return true;
      default:
        return false;
    }
  }

  function receive(m) {
    if (!m || typeof m.type !== "string") return;
    if (m.type === "hello") {
      hello(m);
      return;
    }
    if (m.type === "live") {  // the end of the backlog of a (re)connection
      endReplay();
      return;
    }
    if (reply(m)) return;
    if (paused) { queue.push(m); return; }
    apply(m);
  }

  function endReplay() {
    clearTimeout(replayTimer);
    replaying = false;
    document.body.classList.remove("replaying");
  }

  function setNames(list) {
    names = list.slice();
    for (var s = 0; s < N; s++) {
      seatNodes[s].name.textContent = names[s] || "seat " + s;
      seatNodes[s].name.setAttribute("title", names[s] || "");
    }
  }

  function hello(m) {
    clockOffset = (m.now || Date.now()) - Date.now();
    if (m.names) setNames(m.names);
    S = freshState();
    selection = []; hintCards = []; checkReply = null; queue = []; paused = false;
    if (continueTick) { clearInterval(continueTick); continueTick = null; }
    clear(historyNode);
    clear(noticeNode);
    handEnd.hidden = true;
    matchEnd.hidden = true;
    replaying = !!m.replaying;
    document.body.classList.toggle("replaying", replaying);
    // the backlog ends with {"type": "live"}; should it never come, live 2 s after the hello
    if (replaying) replayTimer = setTimeout(endReplay, 2000);
    connNode.textContent = "connected";
    connNode.className = "conn ok";
    drawAll();
  }

  // ----- the connection -------------------------------------------------------------------
  var sock = null, retries = 0;

  function connect() {
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + T.ws;
    sock = new WebSocket(url);
    sock.addEventListener("open", function () { retries = 0; });
    sock.addEventListener("message", function (ev) {
      var m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      receive(m);
    });
    sock.addEventListener("close", function () {
      if (S.finished || S.closed) {
        connNode.textContent = S.finished ? "match over" : "closed";
        connNode.className = "conn";
        return;
      }
      connNode.textContent = "disconnected \u2014 reconnecting\u2026";
      connNode.className = "conn bad";
      retries += 1;
      setTimeout(connect, Math.min(5000, 500 * retries));
    });
  }

  $("btn-continue").addEventListener("click", resume);
  drawAll();
  connect();
})();
