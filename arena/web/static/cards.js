/* Big Two Arena: drawing cards and small DOM helpers shared by the replay viewer
 * (replay.js) and the Play page (play.js), loaded before either.
 *
 * Cards arrive as the engine's texts ("3D", "TH"); a face is drawn by cards.css.  Text is
 * only ever put into the page with textContent: everything shown may be someone else's. */
(function () {
  "use strict";

  var RANK_TEXT = { T: "10" };
  var SUIT_SYMBOL = { D: "\u2666", C: "\u2663", H: "\u2665", S: "\u2660" };

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function cardLabel(code) {
    var rank = code.slice(0, -1), suit = code.slice(-1);
    return (RANK_TEXT[rank] || rank) + (SUIT_SYMBOL[suit] || suit);
  }

  function cardsText(cards) {
    return cards.map(cardLabel).join(" ");
  }

  /* One card face; data-card holds the engine's text.  ``tag`` (default span) lets the
     Play page make its hand's cards buttons (they are labelled by aria-label instead of a
     title). */
  function cardEl(code, tag) {
    var rank = code.slice(0, -1), suit = code.slice(-1);
    var red = suit === "D" || suit === "H";
    var node = el(tag || "span", "card" + (red ? " red" : ""));
    node.setAttribute("data-card", code);
    if (!tag || tag === "span") node.setAttribute("title", cardLabel(code));
    node.appendChild(el("span", "rank", RANK_TEXT[rank] || rank));
    node.appendChild(el("span", "suit", SUIT_SYMBOL[suit] || suit));
    return node;
  }

  function signed(n) {
    return (n > 0 ? "+" : "") + n;
  }

  window.ArenaCards = {
    el: el, clear: clear, cardLabel: cardLabel, cardsText: cardsText, cardEl: cardEl,
    signed: signed
  };
})();
