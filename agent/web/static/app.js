// pokerbot web: the page's side of the play and watch protocols.
// Every string from the server goes into the page through textContent, never as HTML.
'use strict';

(() => {
  // ---------------------------------------------------------------- helpers

  const $ = (id) => document.getElementById(id);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text != null) node.textContent = String(text);
    return node;
  }

  const isNum = (x) => typeof x === 'number' && Number.isFinite(x);
  const MINUS = '\u2212';
  const CHIPS = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
  const WHOLE = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

  // A number with thousands separators and a real minus sign.
  function num(n, format = CHIPS) {
    if (!isNum(n)) return '—';
    const s = format.format(Math.abs(n));
    return n < 0 && s !== '0' ? MINUS + s : s;
  }

  // The same with an explicit sign on non-zero values: "+1,250", "−500".
  function signed(n, format = CHIPS) {
    if (!isNum(n)) return '—';
    const s = format.format(Math.abs(n));
    if (s === '0') return '0';
    return (n < 0 ? MINUS : '+') + s;
  }

  const signClass = (n) => (n > 0 ? 'pos' : n < 0 ? 'neg' : '');
  const bbText = (bb) => `${CHIPS.format(bb)} bb`;
  const plural = (n, word) => `${WHOLE.format(n)} ${word}${n === 1 ? '' : 's'}`;

  function fillSelect(select, items) {
    select.replaceChildren(...items.map((item) => {
      const option = el('option', null, item.label);
      option.value = item.value;
      if (item.disabled) option.disabled = true;
      return option;
    }));
  }

  // Select the first candidate value the select offers; otherwise leave it as it is.
  function pick(select, candidates) {
    for (const value of candidates) {
      if (value != null && [...select.options].some((o) => o.value === value && !o.disabled)) {
        select.value = value;
        return true;
      }
    }
    return false;
  }

  // ------------------------------------------------------------------ cards

  const SUITS = { s: ['♠', 'spades'], h: ['♥', 'hearts'], d: ['♦', 'diamonds'], c: ['♣', 'clubs'] };
  const RANKS = {
    2: ['2', 'two'], 3: ['3', 'three'], 4: ['4', 'four'], 5: ['5', 'five'], 6: ['6', 'six'],
    7: ['7', 'seven'], 8: ['8', 'eight'], 9: ['9', 'nine'], T: ['10', 'ten'], J: ['J', 'jack'],
    Q: ['Q', 'queen'], K: ['K', 'king'], A: ['A', 'ace'],
  };

  function parseCard(code) {
    if (typeof code !== 'string' || code.length !== 2) return null;
    const rank = RANKS[code[0].toUpperCase()];
    const suit = SUITS[code[1].toLowerCase()];
    if (!rank || !suit) return null;
    return { rank: rank[0], rankName: rank[1], suit: suit[0], suitName: suit[1], s: code[1].toLowerCase() };
  }

  function cardEl(code) {
    const c = parseCard(code);
    if (!c) {
      const unknown = el('div', 'card', '?');
      unknown.dataset.card = String(code);
      return unknown;
    }
    const node = el('div', `card suit-${c.s}`);
    node.dataset.card = code;
    node.setAttribute('role', 'img');
    node.setAttribute('aria-label', `${c.rankName} of ${c.suitName}`);
    const parts = [el('span', 'rank', c.rank), el('span', 'pip', c.suit), el('span', 'suit', c.suit)];
    for (const part of parts) part.setAttribute('aria-hidden', 'true');
    node.append(...parts);
    return node;
  }

  function backEl() {
    const node = el('div', 'card back');
    node.setAttribute('role', 'img');
    node.setAttribute('aria-label', 'hidden card');
    return node;
  }

  // Small inline cards for logs and tables; "—" when there are none.
  function miniCards(cards) {
    if (!Array.isArray(cards) || cards.length === 0) return el('span', 'dash', '—');
    const wrap = el('span', 'mini-cards');
    for (const code of cards) {
      const c = parseCard(code);
      const node = el('span', c ? `mini-card suit-${c.s}` : 'mini-card', c ? c.rank + c.suit : String(code));
      node.dataset.card = String(code);
      if (c) node.setAttribute('aria-label', `${c.rankName} of ${c.suitName}`);
      wrap.append(node);
    }
    return wrap;
  }

  // Redraw a row of cards only when it changed, so the deal animation plays once.
  function setCards(container, cards, backs = 0) {
    const list = Array.isArray(cards) ? cards : [];
    const key = list.length ? list.join(',') : `back:${backs}`;
    if (container.dataset.key === key) return;
    container.dataset.key = key;
    if (list.length) container.replaceChildren(...list.map(cardEl));
    else container.replaceChildren(...Array.from({ length: backs }, backEl));
  }

  // --------------------------------------------------------------- sockets

  // A WebSocket that reconnects one second after it closes.
  function openSocket(path, onMessage, onState) {
    const url = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${path}`;
    let ws = null;
    let retry = null;

    function connect() {
      retry = null;
      ws = new WebSocket(url);
      ws.addEventListener('open', () => onState('open'));
      ws.addEventListener('message', (event) => {
        let msg;
        try {
          msg = JSON.parse(event.data);
        } catch (err) {
          return; // not JSON: nothing this page understands
        }
        if (msg && typeof msg === 'object') onMessage(msg);
      });
      ws.addEventListener('close', () => {
        onState('closed');
        if (retry === null) retry = setTimeout(connect, 1000);
      });
    }

    connect();
    return {
      send(obj) {
        if (!ws || ws.readyState !== WebSocket.OPEN) return false;
        ws.send(JSON.stringify(obj));
        return true;
      },
    };
  }

  // ----------------------------------------------------------------- views

  const views = { play: $('view-play'), watch: $('view-watch') };
  const tabs = { play: $('tab-play'), watch: $('tab-watch') };
  let currentView = 'play';
  let playSock = null;
  let watchSock = null;
  const sockState = { play: 'connecting', watch: 'connecting' };

  function showView(name) {
    currentView = name === 'watch' ? 'watch' : 'play';
    for (const key of Object.keys(views)) {
      views[key].hidden = key !== currentView;
      tabs[key].setAttribute('aria-selected', String(key === currentView));
      tabs[key].tabIndex = key === currentView ? 0 : -1;
    }
    // The watch socket replays a whole match, so it opens only once someone looks.
    if (currentView === 'watch' && !watchSock) {
      watchSock = openSocket('/ws/watch', onWatchMessage, (state) => {
        sockState.watch = state;
        updateConn();
        markWatch('status');
      });
    }
    if (currentView === 'watch') markWatch('table', 'actions', 'chart', 'text', 'status');
    updateConn();
  }

  function updateConn() {
    const node = $('conn');
    const state = sockState[currentView];
    node.dataset.state = state;
    node.textContent = state === 'open' ? 'connected' : state === 'closed' ? 'reconnecting…' : 'connecting…';
  }

  for (const [name, tab] of Object.entries(tabs)) {
    tab.addEventListener('click', () => {
      if (location.hash === `#${name}`) showView(name);
      else location.hash = name;
    });
  }
  $('tab-play').parentElement.addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
    const next = currentView === 'play' ? 'watch' : 'play';
    location.hash = next;
    tabs[next].focus();
  });
  window.addEventListener('hashchange', () => showView(location.hash.slice(1)));

  // ================================================================== PLAY

  const gameSel = $('game');
  const opponentSel = $('opponent');
  const startBtn = $('start');
  const leaveBtn = $('leave');
  const foldBtn = $('fold');
  const callBtn = $('call');
  const raiseBtn = $('raise');
  const amountInput = $('amount');
  const slider = $('amount-slider');
  const shortcutsBox = $('shortcuts');
  const messageBox = $('message');

  const play = {
    hello: null,
    table: null,
    pending: false,     // an action was sent; controls wait for the server's answer
    decisionKey: '',    // which decision the amount box belongs to
    matchKey: '',
    lastHandKey: '',
    lastHandNo: null,
    historyKey: '',
    streetsKey: '',
    deadline: null,     // performance.now() at which the decision times out
    timerTotal: 60,
    flashTimer: null,
  };

  // ------------------------------------------------------------- messages

  function showMessage(text, kind) {
    $('message-text').textContent = String(text ?? '');
    messageBox.classList.toggle('notice', kind === 'notice');
    messageBox.dataset.kind = kind;
    messageBox.hidden = false;
  }

  function clearMessage() {
    messageBox.hidden = true;
    $('message-text').textContent = '';
    delete messageBox.dataset.kind;
  }

  $('message-close').addEventListener('click', clearMessage);

  // ---------------------------------------------------------------- setup

  function fillOpponents(prefer) {
    const game = gameSel.value;
    const all = (play.hello && Array.isArray(play.hello.opponents)) ? play.hello.opponents : [];
    const fits = all.filter((o) => o && (!o.game || o.game === game));
    fillSelect(opponentSel, fits.map((o) => ({ value: o.spec, label: o.label || o.spec })));
    pick(opponentSel, prefer);
  }

  function onHello(msg) {
    play.hello = msg;
    play.timerTotal = isNum(msg.timer_s) && msg.timer_s > 0 ? msg.timer_s : 60;
    const defaults = msg.defaults || {};
    const keepGame = gameSel.value;
    const keepOpponent = opponentSel.value;
    const games = Array.isArray(msg.games) ? msg.games.filter((g) => g && g.name) : [];
    fillSelect(gameSel, games.map((g) => ({ value: g.name, label: g.label || g.name })));
    pick(gameSel, [keepGame, defaults.game]);
    fillOpponents([keepOpponent, defaults.opponent]);
    // Connected again: the status the last table gave, or an invitation to sit down.
    const status = $('status');
    status.textContent = play.table ? (play.table.status_text || play.table.status || '') : 'choose a game and an opponent, then sit down';
    status.dataset.status = play.table ? (play.table.status || '') : 'idle';
    updateSetup();
  }

  gameSel.addEventListener('change', () => {
    fillOpponents([opponentSel.value, play.hello && play.hello.defaults && play.hello.defaults.opponent]);
  });

  $('setup').addEventListener('submit', (event) => {
    event.preventDefault();
    if (!gameSel.value || !opponentSel.value) {
      showMessage('choose a game and an opponent first', 'error');
      return;
    }
    clearMessage();
    if (!playSock.send({ type: 'start', game: gameSel.value, opponent: opponentSel.value })) {
      showMessage('not connected to the server; reconnecting…', 'error');
    }
  });

  leaveBtn.addEventListener('click', () => {
    clearMessage();
    if (!playSock.send({ type: 'leave' })) showMessage('not connected to the server; reconnecting…', 'error');
  });

  function updateSetup() {
    const status = play.table ? play.table.status : '';
    const live = status === 'starting' || status === 'playing';
    startBtn.textContent = play.table && status ? 'New match' : 'Sit down';
    startBtn.disabled = !play.hello || sockState.play !== 'open';
    leaveBtn.disabled = !live || sockState.play !== 'open';
  }

  // ---------------------------------------------------------------- table

  function seatsOf(t) {
    const seats = Array.isArray(t.seats) ? t.seats : [];
    const you = seats.find((s) => s && s.who === 'you') || seats[0] || {};
    const bot = seats.find((s) => s && s.who === 'bot') || seats[1] || {};
    return { you, bot };
  }

  function renderSeat(prefix, seatId, seat, cards, backs, toAct, bb) {
    const node = $(seatId);
    const name = $(`${prefix}-name`);
    name.textContent = seat.name || (prefix === 'your' ? 'you' : 'bot');
    name.title = name.textContent; // long names are cut with an ellipsis
    $(`${prefix}-stack`).textContent = isNum(seat.stack) ? num(seat.stack) : '';
    $(`${prefix}-blind`).textContent = seat.blind_name || '';
    $(`${prefix}-button`).hidden = !seat.button;
    const tag = $(`${prefix}-tag`);
    tag.hidden = !(seat.folded || seat.all_in);
    tag.textContent = seat.folded ? 'folded' : seat.all_in ? 'all-in' : '';
    tag.classList.toggle('all-in', !!seat.all_in && !seat.folded);
    node.classList.toggle('to-act', toAct);
    node.classList.toggle('folded', !!seat.folded);
    setCards($(`${prefix}-cards`), cards, backs);

    const bet = $(`${prefix}-bet`);
    bet.replaceChildren();
    if (isNum(seat.bet) && seat.bet > 0) {
      bet.append(el('span', prefix === 'your' ? 'chip gold' : 'chip blue'), el('span', null, num(seat.bet)));
      if (bb > 0) bet.append(el('span', 'bb', bbText(seat.bet / bb)));
    }
  }

  function onTable(t) {
    play.table = t;
    play.pending = false;
    const { you, bot } = seatsOf(t);
    const game = t.game || {};
    const bb = isNum(game.big_blind) ? game.big_blind : 0;
    const toAct = t.to_act === 'you' || t.to_act === 'bot' ? t.to_act : '';
    const hand = isNum(t.hand) ? t.hand : 0;

    // Hooks for tests and scripts.
    document.body.dataset.toAct = toAct;
    document.body.dataset.hand = String(hand);

    const status = $('status');
    status.textContent = t.status_text || t.status || '';
    status.dataset.status = t.status || '';

    const handNo = $('hand-number');
    handNo.dataset.hand = String(hand);
    handNo.textContent = isNum(t.hands_total) ? `hand ${hand} of ${t.hands_total}` : `hand ${hand}`;

    $('felt-hint').hidden = true;
    $('game-label').textContent = isNum(game.small_blind) && isNum(game.big_blind)
      ? `blinds ${num(game.small_blind)}/${num(game.big_blind)}` : '';
    document.title = toAct === 'you' ? '● your turn · pokerbot' : 'pokerbot · heads-up table';

    // A new match (or the page reopened on one): show its game and opponent in the setup bar.
    const matchKey = `${game.name || ''}|${(t.opponent && t.opponent.spec) || ''}|${t.log || ''}`;
    if (matchKey !== play.matchKey) {
      play.matchKey = matchKey;
      if (game.name && pick(gameSel, [game.name])) fillOpponents([t.opponent && t.opponent.spec, opponentSel.value]);
    }

    const holeCount = Array.isArray(you.cards) ? you.cards.length : 0;
    const botCards = Array.isArray(bot.cards) ? bot.cards : [];
    renderSeat('your', 'seat-you', you, you.cards, 0, toAct === 'you', bb);
    renderSeat('bot', 'seat-bot', bot, botCards, botCards.length ? 0 : holeCount, toAct === 'bot', bb);

    setCards($('board'), t.board, 0);
    const pot = $('pot');
    pot.replaceChildren();
    if (isNum(t.pot) && t.pot > 0) {
      pot.append(el('span', 'chip'), el('span', null, `pot ${num(t.pot)}`));
      if (bb > 0) pot.append(el('span', 'bb', `· ${bbText(t.pot / bb)}`));
    }

    renderTurn(t, bot, bb, toAct);
    renderActions(t);
    setDeadline(t.deadline_s);
    renderLastHand(t.last_hand, bot);
    renderStreets(t.streets);
    renderScore(t.score);
    renderHistory(t.history);

    const log = $('log-path');
    log.textContent = t.log ? `log: ${t.log}` : '';
    log.hidden = !t.log;
    updateSetup();
  }

  function renderTurn(t, bot, bb, toAct) {
    const turn = $('turn');
    const toCall = $('to-call');
    turn.dataset.who = toAct;
    toCall.textContent = '';
    if (toAct === 'you') {
      turn.textContent = 'your turn';
      if (isNum(t.to_call) && t.to_call > 0) {
        toCall.textContent = `${num(t.to_call)} to call` + (bb > 0 ? ` (${bbText(t.to_call / bb)})` : '');
      } else {
        toCall.textContent = 'nothing to call';
      }
    } else if (toAct === 'bot') {
      turn.textContent = `${bot.name || 'bot'} is thinking…`;
    } else if (t.status === 'finished') {
      turn.textContent = 'match over';
    } else if (t.status === 'aborted') {
      turn.textContent = 'match stopped';
    } else if (t.status === 'playing' && t.street === 'showdown') {
      turn.textContent = 'hand over';
    } else {
      turn.textContent = '';
    }
  }

  // ------------------------------------------------------------- actions

  function legalNow() {
    const t = play.table;
    return t && t.legal && t.to_act === 'you' && !play.pending && sockState.play === 'open' ? t.legal : null;
  }

  function isLimit(t) {
    if (!t) return false;
    if (t.legal && typeof t.legal.limit === 'boolean') return t.legal.limit;
    return !!(t.game && t.game.limit);
  }

  function renderActions(t) {
    const legal = t.legal || null;
    const limit = isLimit(t);
    $('sizing').hidden = limit;

    callBtn.textContent = legal && legal.call_text ? legal.call_text : 'call';

    // A new decision starts at the minimum raise; a repeated snapshot of the same decision keeps what was typed.
    const key = legal && !limit
      ? [t.hand, t.street, (t.streets || []).reduce((n, s) => n + ((s && s.actions) || []).length, 0), legal.min_to, legal.max_to].join('|')
      : '';
    if (legal && !limit && isNum(legal.min_to) && isNum(legal.max_to)) {
      for (const input of [amountInput, slider]) {
        input.min = String(legal.min_to);
        input.max = String(legal.max_to);
        input.step = '1';
      }
      $('amount-range').textContent = `from ${legal.min_to} to ${legal.max_to} chips`;
      if (key !== play.decisionKey) setAmount(legal.min_to);
    }
    play.decisionKey = key;

    shortcutsBox.replaceChildren();
    if (legal && !limit && Array.isArray(legal.shortcuts)) {
      for (const s of legal.shortcuts) {
        if (!s || !isNum(s.to)) continue;
        const button = el('button', 'shortcut', s.label || String(s.to));
        button.type = 'button';
        button.dataset.to = String(s.to);
        button.dataset.amount = String(s.to);
        button.title = `${legal.raise_text === 'bet' ? 'bet' : 'raise to'} ${s.to}`;
        button.addEventListener('click', () => {
          clearMessage();
          setAmount(s.to);
        });
        shortcutsBox.append(button);
      }
    }
    refreshControls();
  }

  // Enable what the person may do right now; everything else is disabled.
  function refreshControls() {
    const t = play.table;
    const legal = legalNow();
    foldBtn.disabled = !(legal && legal.fold);
    foldBtn.title = t && t.legal && t.legal.fold === false ? 'checking is free' : '';
    callBtn.disabled = !(legal && legal.call !== false);
    raiseBtn.disabled = !(legal && legal.raise);
    const sizing = !!(legal && legal.raise && !isLimit(t));
    amountInput.disabled = !sizing;
    slider.disabled = !sizing;
    for (const b of shortcutsBox.querySelectorAll('button')) b.disabled = !sizing;
    $('actions').dataset.pending = String(play.pending);
    updateRaiseText();
  }

  function updateRaiseText() {
    const t = play.table;
    const legal = t && t.legal;
    if (!legal) {
      raiseBtn.textContent = 'raise';
      return;
    }
    const word = legal.raise_text || 'raise';
    if (isLimit(t)) {
      raiseBtn.textContent = word;
      return;
    }
    const raw = amountInput.value.trim();
    const value = raw === '' ? NaN : Number(raw);
    const amount = Number.isFinite(value) ? String(value) : '…';
    raiseBtn.textContent = word === 'bet' ? `bet ${amount}` : `${word} to ${amount}`;
    for (const b of shortcutsBox.querySelectorAll('button')) b.classList.toggle('current', Number(b.dataset.to) === value);
  }

  function setSliderFill() {
    const min = Number(slider.min);
    const max = Number(slider.max);
    const pct = max > min ? ((Number(slider.value) - min) / (max - min)) * 100 : 0;
    slider.style.setProperty('--fill', `${Math.max(0, Math.min(100, pct))}%`);
  }

  function setAmount(value) {
    amountInput.value = String(value);
    slider.value = String(value);
    amountInput.removeAttribute('aria-invalid');
    setSliderFill();
    updateRaiseText();
  }

  amountInput.addEventListener('input', () => {
    const value = Number(amountInput.value);
    if (amountInput.value.trim() !== '' && Number.isFinite(value)) slider.value = String(value);
    amountInput.removeAttribute('aria-invalid');
    setSliderFill();
    updateRaiseText();
  });
  slider.addEventListener('input', () => {
    amountInput.value = slider.value;
    amountInput.removeAttribute('aria-invalid');
    setSliderFill();
    updateRaiseText();
  });

  function sendAction(fields) {
    clearMessage();
    if (!playSock.send({ type: 'action', ...fields })) {
      showMessage('not connected to the server; reconnecting…', 'error');
      return;
    }
    // No second click until the server answers with a table or an error.
    play.pending = true;
    refreshControls();
  }

  function doFold() {
    const legal = legalNow();
    if (legal && legal.fold) sendAction({ action: 'fold' });
  }

  function doCall() {
    const legal = legalNow();
    if (legal && legal.call !== false) sendAction({ action: 'call' });
  }

  function doRaise() {
    const legal = legalNow();
    if (!legal || !legal.raise) return;
    if (isLimit(play.table)) {
      sendAction({ action: 'raise' });
      return;
    }
    const raw = amountInput.value.trim();
    const value = raw === '' ? NaN : Number(raw);
    if (!Number.isInteger(value) || value < legal.min_to || value > legal.max_to) {
      // Refused here, not sent: the same rule the server applies.
      showMessage(`a raise must be to between ${legal.min_to} and ${legal.max_to} chips`
        + (Number.isFinite(value) && !Number.isInteger(value) ? ' (whole chips only)' : ''), 'error');
      amountInput.setAttribute('aria-invalid', 'true');
      return;
    }
    sendAction({ action: 'raise', to: value });
  }

  foldBtn.addEventListener('click', doFold);
  callBtn.addEventListener('click', doCall);
  raiseBtn.addEventListener('click', doRaise);

  document.addEventListener('keydown', (event) => {
    if (currentView !== 'play' || event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const target = event.target instanceof Element ? event.target : null;
    if (target === amountInput) {
      if (event.key === 'Enter') {
        event.preventDefault();
        doRaise();
      }
      return;
    }
    if (target && target.closest('input, select, textarea, [contenteditable="true"]')) return;
    if (!legalNow()) return;
    const key = event.key.toLowerCase();
    // Space on a focused button keeps its own meaning (pressing that button).
    if (key === ' ' && target && target.closest('button, a')) return;
    if (key === 'f') {
      event.preventDefault();
      doFold();
    } else if (key === 'c' || key === ' ') {
      event.preventDefault();
      doCall();
    } else if (key === 'r' || key === 'b') {
      event.preventDefault();
      doRaise();
    }
  });

  // ---------------------------------------------------------------- timer

  const timerBox = $('timer');

  function setDeadline(seconds) {
    play.deadline = isNum(seconds) ? performance.now() + seconds * 1000 : null;
    tickTimer();
  }

  function tickTimer() {
    if (play.deadline === null) {
      timerBox.hidden = true;
      return;
    }
    const left = Math.max(0, (play.deadline - performance.now()) / 1000);
    const total = Math.max(play.timerTotal, left, 1);
    timerBox.hidden = false;
    $('timer-text').textContent = `${Math.ceil(left)} s`;
    $('timer-bar').style.width = `${(left / total) * 100}%`;
    timerBox.classList.toggle('urgent', left < 10);
  }

  setInterval(tickTimer, 250);

  // ---------------------------------------------------------- side panel

  function whoLabel(who, bot) {
    return who === 'you' ? 'you' : who === 'bot' ? (bot && bot.name) || 'bot' : String(who ?? '');
  }

  function renderLastHand(lh, bot) {
    const box = $('last-hand');
    const key = lh ? JSON.stringify(lh) : '';
    if (key === play.lastHandKey) return;
    play.lastHandKey = key;
    if (!lh) {
      box.replaceChildren(el('p', 'empty', 'No hand finished yet.'));
      box.classList.remove('flash');
      return;
    }
    const head = el('div', 'headline');
    head.append(el('span', 'text', lh.text || ''));
    if (isNum(lh.chips)) {
      const won = el('span', `won ${signClass(lh.chips)}`, `${signed(lh.chips)} chips`);
      won.title = `your result in hand ${lh.hand}`;
      head.append(won);
    }
    const parts = [head];
    if (Array.isArray(lh.showdown) && lh.showdown.length) {
      const grid = el('div', 'showdown');
      for (const s of lh.showdown) {
        if (!s) continue;
        const who = el('span', 'who', whoLabel(s.who, bot));
        who.title = who.textContent;
        grid.append(who, miniCards(s.cards), el('span', 'hand-name', s.hand_name || ''));
      }
      parts.push(grid);
    }
    const line = el('div', 'board-line');
    line.append(el('span', null, `hand ${lh.hand ?? ''}`));
    if (Array.isArray(lh.board) && lh.board.length) line.append(el('span', null, '· board'), miniCards(lh.board));
    if (isNum(lh.pot)) line.append(el('span', null, `· pot ${num(lh.pot)}`));
    parts.push(line);
    box.replaceChildren(...parts);

    // Highlight a newly finished hand for a few seconds.
    if (lh.hand !== play.lastHandNo) {
      play.lastHandNo = lh.hand;
      box.classList.remove('flash');
      void box.offsetWidth; // restart the animation
      box.classList.add('flash');
      clearTimeout(play.flashTimer);
      play.flashTimer = setTimeout(() => box.classList.remove('flash'), 3200);
    }
  }

  function renderStreets(streets) {
    const box = $('street-log');
    const key = JSON.stringify(streets || []);
    if (key === play.streetsKey) return;
    play.streetsKey = key;
    const list = Array.isArray(streets) ? streets.filter(Boolean) : [];
    if (!list.length) {
      box.replaceChildren(el('p', 'empty', 'No action yet.'));
      return;
    }
    box.replaceChildren(...list.map((street) => {
      const section = el('div', 'street');
      const head = el('div', 'street-head');
      head.append(el('span', 'street-name', street.name || ''));
      if (Array.isArray(street.board) && street.board.length) head.append(miniCards(street.board));
      const ol = el('ol');
      for (const a of street.actions || []) {
        if (!a) continue;
        const li = el('li');
        li.append(el('span', a.who === 'you' ? 'who-you' : 'who-bot', a.who === 'you' ? 'you' : 'bot'));
        const bb = isNum(a.bb) && isNum(a.chips) && a.chips > 0 ? ` (${bbText(a.bb)})` : '';
        li.append(document.createTextNode(`: ${a.text || ''}${bb}`));
        ol.append(li);
      }
      section.append(head, ol);
      return section;
    }));
  }

  function renderScore(score) {
    const node = $('score');
    if (!score || !isNum(score.hands) || score.hands <= 0) {
      node.replaceChildren(document.createTextNode('no hands played yet'));
      node.dataset.chips = String(score && isNum(score.chips) ? score.chips : 0);
      node.dataset.hands = String(score && isNum(score.hands) ? score.hands : 0);
      node.dataset.mbb = String(score && isNum(score.mbb_per_game) ? score.mbb_per_game : 0);
      return;
    }
    node.dataset.chips = String(score.chips);
    node.dataset.hands = String(score.hands);
    node.dataset.mbb = String(score.mbb_per_game);
    // Two groups that wrap as wholes: the chips, then the rate with its interval.
    const chips = el('span', 'group');
    chips.append(el('span', signClass(score.chips), signed(score.chips)),
      document.createTextNode(` chips over ${plural(score.hands, 'hand')}`));
    const rate = el('span', 'group');
    rate.append(el('span', signClass(score.mbb_per_game), `${signed(score.mbb_per_game, WHOLE)} mbb/g`));
    if (Array.isArray(score.ci95) && score.ci95.length === 2) {
      rate.append(el('span', 'sub', ` [${signed(score.ci95[0], WHOLE)}, ${signed(score.ci95[1], WHOLE)}] 95%`));
    }
    node.replaceChildren(chips, document.createTextNode(' · '), rate);
  }

  function renderHistory(history) {
    const list = Array.isArray(history) ? history.filter(Boolean) : [];
    const key = JSON.stringify(list);
    if (key === play.historyKey) return;
    play.historyKey = key;
    const body = $('history').tBodies[0];
    body.replaceChildren(...list.map((h) => {
      const tr = el('tr');
      tr.dataset.hand = String(h.hand);
      if (h.text) tr.title = h.text;
      const no = el('td', null, h.hand ?? '');
      if (h.button) {
        const mark = el('span', 'btn-mark', 'D');
        mark.title = 'you had the button';
        no.append(mark);
      }
      const cell = (child, className) => {
        const td = el('td', className);
        td.append(child);
        return td;
      };
      tr.append(
        no,
        el('td', `num ${signClass(h.chips)}`, signed(h.chips)),
        cell(miniCards(h.cards)),
        cell(miniCards(h.bot_cards)),
        cell(miniCards(h.board)),
        el('td', 'betting', h.betting || ''),
        el('td', 'text', h.text || ''),
      );
      return tr;
    }));
    if (!list.length) {
      const tr = el('tr');
      const td = el('td', 'empty', 'No hands yet.');
      td.colSpan = 7;
      tr.append(td);
      body.append(tr);
    }
  }

  // --------------------------------------------------------- play socket

  function onPlayMessage(msg) {
    switch (msg.type) {
      case 'hello': onHello(msg); break;
      case 'table': onTable(msg); break;
      case 'error':
        play.pending = false;
        showMessage(msg.message || 'refused', 'error');
        refreshControls();
        break;
      case 'notice': showMessage(msg.message || '', 'notice'); break;
      default: break; // a newer server's message: ignored
    }
  }

  function onPlayState(state) {
    sockState.play = state;
    updateConn();
    if (state !== 'open') {
      const status = $('status');
      status.textContent = 'reconnecting…';
      status.dataset.status = 'reconnecting';
    }
    play.pending = false;
    if (play.table) refreshControls();
    updateSetup();
  }

  // ================================================================= WATCH

  const watchSel = $('watch-match');
  const MAX_HAND_ITEMS = 5000;   // finished hands kept in the list, like the chart's points
  const MAX_POINTS = 5000;

  const watch = {
    matches: [],
    watching: null,
    match: null,            // from reset: id, game, players
    hand: null,             // the hand on the table
    decisions: [],          // that hand's decisions
    cards: [[], []],
    lastAction: ['', ''],
    board: [],
    betting: '',
    result: null,           // the hand event of the hand on the table, once finished
    newHands: [],           // finished hands not yet in the list
    handCount: 0,
    points: [],             // player 0's running mbb/g, thinned to at most MAX_POINTS
    stride: 1,              // keep one point in `stride` once thinned
    skipped: 0,
    latest: null,           // the newest point, always drawn
    bankroll: null,
    ended: null,
    dirty: new Set(),
    frame: 0,
  };

  function markWatch(...parts) {
    for (const p of parts) watch.dirty.add(p);
    if (!watch.frame) watch.frame = requestAnimationFrame(renderWatch);
  }

  function playersOf() {
    const players = watch.match && Array.isArray(watch.match.players) ? watch.match.players : [];
    return [players[0] ?? 'player 0', players[1] ?? 'player 1'];
  }

  // Which side of the table a decision belongs to: by name when the names differ, else by seat.
  function sideOf(d) {
    const [p0, p1] = playersOf();
    if (p0 !== p1) {
      if (d.player === p0) return 0;
      if (d.player === p1) return 1;
    }
    return d.seat === 1 ? 1 : 0;
  }

  function clearWatchHand(hand) {
    watch.hand = hand;
    watch.decisions = [];
    watch.cards = [[], []];
    watch.lastAction = ['', ''];
    watch.board = [];
    watch.betting = '';
    watch.result = null;
  }

  function onReset(msg) {
    const match = msg.match || {};
    watch.match = match;
    clearWatchHand(null);
    watch.newHands = [];
    watch.handCount = 0;
    watch.points = [];
    watch.stride = 1;
    watch.skipped = 0;
    watch.latest = null;
    watch.bankroll = null;
    watch.ended = null;
    $('watch-hands').replaceChildren();
    if (match.id) {
      watch.watching = match.id;
      pick(watchSel, [match.id]);
    }
    markWatch('table', 'actions', 'chart', 'text', 'status', 'score', 'badge');
  }

  function onDecision(d) {
    if (d.hand !== watch.hand || watch.result) clearWatchHand(d.hand);
    watch.decisions.push(d);
    const side = sideOf(d);
    if (Array.isArray(d.cards) && d.cards.length) watch.cards[side] = d.cards;
    watch.lastAction[side] = d.action_text || d.action || '';
    if (Array.isArray(d.board)) watch.board = d.board;
    if (typeof d.betting === 'string') watch.betting = d.betting;
    markWatch('table', 'actions', 'status');
  }

  function addPoint(point) {
    watch.latest = point;
    watch.skipped += 1;
    if (watch.skipped < watch.stride) return;
    watch.skipped = 0;
    watch.points.push(point);
    if (watch.points.length > MAX_POINTS) {
      // Thin to every other point and keep half as many from now on.
      watch.points = watch.points.filter((_, i) => i % 2 === 1);
      watch.stride *= 2;
    }
  }

  function onHand(h) {
    watch.handCount += 1;
    watch.newHands.push(h);
    if (watch.newHands.length > MAX_HAND_ITEMS) watch.newHands.shift();
    // Show it on the table unless the next hand is already being played there.
    if (h.hand === watch.hand || watch.hand === null || watch.result) {
      if (h.hand !== watch.hand) clearWatchHand(h.hand);
      watch.result = h;
      if (Array.isArray(h.board)) watch.board = h.board;
      if (typeof h.betting === 'string') watch.betting = h.betting;
    }
    if (Array.isArray(h.bankroll)) {
      watch.bankroll = h.bankroll;
      const b0 = h.bankroll[0];
      if (b0 && isNum(b0.mbb_per_game)) {
        const ci = Array.isArray(b0.ci95) && isNum(b0.ci95[0]) && isNum(b0.ci95[1]) ? b0.ci95 : null;
        addPoint({ x: isNum(b0.hands) ? b0.hands : watch.handCount, y: b0.mbb_per_game, lo: ci ? ci[0] : null, hi: ci ? ci[1] : null });
      }
    }
    markWatch('table', 'hands', 'chart', 'text', 'status');
  }

  function onMatches(msg) {
    watch.matches = Array.isArray(msg.matches) ? msg.matches.filter((m) => m && m.id) : [];
    if (msg.watching !== undefined) watch.watching = msg.watching;
    const items = watch.matches.map((m) => ({ value: m.id, label: `${m.label || m.id}${m.running ? ' · running' : ''}` }));
    if (!items.length) items.push({ value: '', label: 'no matches yet', disabled: true });
    else if (!watch.watching) items.unshift({ value: '', label: 'choose a match…', disabled: true });
    fillSelect(watchSel, items);
    if (!pick(watchSel, [watch.watching])) watchSel.value = '';
    markWatch('badge', 'status');
  }

  function onEnd(msg) {
    watch.ended = msg;
    const m = watch.matches.find((x) => x.id === msg.match);
    if (m) m.running = false;
    markWatch('score', 'badge', 'status');
  }

  watchSel.addEventListener('change', () => {
    if (!watchSel.value) return;
    watch.watching = watchSel.value;
    if (watchSock) watchSock.send({ type: 'watch', match: watchSel.value });
    markWatch('badge');
  });

  function onWatchMessage(msg) {
    switch (msg.type) {
      case 'matches': onMatches(msg); break;
      case 'reset': onReset(msg); break;
      case 'decision': onDecision(msg); break;
      case 'hand': onHand(msg); break;
      case 'end': onEnd(msg); break;
      default: break;
    }
  }

  // ------------------------------------------------------ watch rendering

  // Events can arrive by the thousand (a match replayed from its start): draw once per frame.
  function renderWatch() {
    watch.frame = 0;
    if (currentView !== 'watch') return; // drawn again when the view is shown
    const dirty = watch.dirty;
    watch.dirty = new Set();
    if (dirty.has('badge')) renderBadge();
    if (dirty.has('status')) renderWatchStatus();
    if (dirty.has('score')) renderWatchScore();
    if (dirty.has('table')) renderWatchTable();
    if (dirty.has('actions')) renderDecisions();
    if (dirty.has('hands')) renderWatchHands();
    if (dirty.has('text')) renderBankrollText();
    if (dirty.has('chart')) drawBankroll();
  }

  function renderBadge() {
    const badge = $('watch-badge');
    const m = watch.matches.find((x) => x.id === watch.watching);
    const running = m ? !!m.running && !(watch.ended && watch.ended.match === m.id) : null;
    badge.dataset.running = running === null ? '' : String(running);
    badge.textContent = running === null ? 'no match' : running ? 'running' : 'finished';
  }

  function renderWatchStatus() {
    const node = $('watch-status');
    if (sockState.watch === 'closed') node.textContent = 'reconnecting…';
    else if (sockState.watch !== 'open') node.textContent = 'connecting…';
    else if (!watch.match) node.textContent = watch.matches.length ? 'choose a match to watch' : 'waiting for a match to start…';
    else {
      const game = watch.match.game || {};
      node.textContent = `${playersOf().join(' vs ')} · ${game.label || game.name || ''} · ${plural(watch.handCount, 'hand')} finished`;
    }
    $('watch-hand').textContent = watch.hand !== null && watch.hand !== undefined ? `hand ${WHOLE.format(watch.hand)}` : '';
  }

  function renderWatchScore() {
    const node = $('watch-score');
    const e = watch.ended;
    node.hidden = !e;
    node.textContent = e ? [e.text || 'match finished', e.score].filter(Boolean).join(' · ') : '';
  }

  function renderWatchTable() {
    const names = playersOf();
    const game = (watch.match && watch.match.game) || {};
    $('watch-game-label').textContent = isNum(game.small_blind) && isNum(game.big_blind)
      ? `blinds ${num(game.small_blind)}/${num(game.big_blind)}` : '';
    // A hand event lists its players in its own order; match them to the table's sides by name.
    const result = watch.result;
    const resultIndex = (i) => {
      const order = result && Array.isArray(result.players) ? result.players : null;
      const at = order && names[0] !== names[1] ? order.indexOf(names[i]) : -1;
      return at >= 0 ? at : i;
    };
    const shown = watch.cards.map((c, i) => {
      const fromResult = result && Array.isArray(result.cards) ? result.cards[resultIndex(i)] : null;
      return Array.isArray(fromResult) && fromResult.length ? fromResult : c;
    });
    const holeCount = Math.max(shown[0].length, shown[1].length);
    for (const i of [0, 1]) {
      const seat = $(`watch-seat-${i}`);
      const name = seat.querySelector('.name');
      name.textContent = names[i];
      name.title = names[i];
      const last = seat.querySelector('.last-action');
      last.className = 'last-action';
      const chips = result && Array.isArray(result.chips) ? result.chips[resultIndex(i)] : null;
      if (isNum(chips)) {
        last.textContent = `${signed(chips)} chips`;
        last.classList.add(signClass(chips) || 'even');
      } else {
        last.textContent = watch.lastAction[i];
      }
      setCards(seat.querySelector('.cards'), shown[i], watch.hand === null ? 0 : holeCount);
    }
    setCards($('watch-board'), watch.board, 0);
    const betting = $('watch-betting');
    betting.textContent = watch.betting ? `betting ${watch.betting}` : '';
  }

  function renderDecisions() {
    const list = $('watch-actions');
    if (!watch.decisions.length) {
      list.replaceChildren(el('li', 'empty', watch.match ? 'Waiting for the next decision…' : 'No match on the table.'));
      return;
    }
    const names = playersOf();
    list.replaceChildren(...watch.decisions.map((d) => {
      const li = el('li', 'decision');
      const head = el('div', 'decision-head');
      head.append(
        el('span', 'street', d.street || ''),
        el('span', 'actor', d.player || names[sideOf(d)]),
        el('span', 'act-text', d.action_text || d.action || ''),
      );
      if (isNum(d.bb) && isNum(d.chips) && d.chips > 0) head.append(el('span', 'empty', bbText(d.bb)));
      li.append(head);
      if (Array.isArray(d.distribution) && d.distribution.length) {
        const dist = el('div', 'dist');
        dist.setAttribute('role', 'list');
        d.distribution.forEach((entry, i) => {
          const p = entry && isNum(entry.p) ? Math.max(0, Math.min(1, entry.p)) : 0;
          const chosen = i === d.chosen ? ' chosen' : '';
          const label = el('span', `label${chosen}`, (entry && entry.label) || '');
          label.setAttribute('role', 'listitem');
          const track = el('span', 'track');
          const fill = el('span', `fill${chosen}`);
          fill.style.width = `${(p * 100).toFixed(1)}%`;
          track.append(fill);
          const pct = el('span', `pct${chosen}`, `${(p * 100).toFixed(p > 0 && p < 0.01 ? 1 : 0)}%`);
          dist.append(label, track, pct);
        });
        li.append(dist);
      }
      if (d.mapping && typeof d.mapping === 'object') {
        const to = Array.isArray(d.mapping.to)
          ? d.mapping.to.map((m) => `${m.label} ${isNum(m.p) ? Math.round(m.p * 100) : '?'}%`).join(' / ')
          : '';
        li.append(el('p', 'mapping', `translated ${d.mapping.real || '?'} as ${to}${d.mapping.chosen ? ` → ${d.mapping.chosen}` : ''}`));
      }
      if (d.fallback) li.append(el('p', 'fallback', 'fallback: the tree could not follow'));
      return li;
    }));
  }

  function handItem(h) {
    const li = el('li', 'hand');
    li.dataset.hand = String(h.hand);
    li.append(el('span', 'hand-no', `#${h.hand}`));
    const players = Array.isArray(h.players) ? h.players : playersOf();
    const cards = el('div', 'hand-cards');
    players.forEach((name, i) => {
      cards.append(el('span', 'who', name), miniCards(Array.isArray(h.cards) ? h.cards[i] : null));
    });
    if (Array.isArray(h.board) && h.board.length) cards.append(el('span', 'who', 'board'), miniCards(h.board));
    const chips = el('div', 'chips');
    players.forEach((name, i) => {
      const c = Array.isArray(h.chips) ? h.chips[i] : null;
      chips.append(el('span', signClass(c), `${name} ${signed(c)}`));
    });
    li.append(cards, chips, el('div', 'betting', h.betting || ''));
    return li;
  }

  function renderWatchHands() {
    const list = $('watch-hands');
    if (!watch.newHands.length) return;
    const fresh = watch.newHands.slice().reverse().map(handItem);
    watch.newHands = [];
    list.prepend(...fresh);
    while (list.children.length > MAX_HAND_ITEMS) list.lastElementChild.remove();
  }

  function renderBankrollText() {
    const node = $('bankroll-text');
    const rows = Array.isArray(watch.bankroll) ? watch.bankroll.filter(Boolean) : [];
    if (!rows.length) {
      node.replaceChildren(el('span', 'empty', 'No hands finished yet.'));
      return;
    }
    node.replaceChildren(...rows.map((b) => {
      const line = el('span');
      line.append(
        el('span', 'player', `${b.player}: `),
        el('span', signClass(b.mbb_per_game), `${signed(b.mbb_per_game, WHOLE)} mbb/g`),
      );
      const ci = Array.isArray(b.ci95) ? ` [${signed(b.ci95[0], WHOLE)}, ${signed(b.ci95[1], WHOLE)}] 95%` : '';
      line.append(document.createTextNode(`${ci} · ${signed(b.chips)} chips over ${plural(b.hands, 'hand')}`));
      return line;
    }));
  }

  // A round step for about `count` ticks over `span`.
  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const power = 10 ** Math.floor(Math.log10(raw));
    const f = raw / power;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * power;
  }

  function shortNum(n) {
    const a = Math.abs(n);
    const s = a >= 1e6 ? `${+(a / 1e6).toFixed(1)}M` : a >= 1e3 ? `${+(a / 1e3).toFixed(1)}k` : WHOLE.format(a);
    return n < 0 ? MINUS + s : s;
  }

  function drawBankroll() {
    const canvas = $('bankroll');
    const box = canvas.getBoundingClientRect();
    if (box.width < 10 || box.height < 10) return; // not on screen
    const dpr = window.devicePixelRatio || 1;
    const W = Math.round(box.width * dpr);
    const H = Math.round(box.height * dpr);
    if (canvas.width !== W || canvas.height !== H) {
      canvas.width = W;
      canvas.height = H;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const w = box.width;
    const h = box.height;
    ctx.clearRect(0, 0, w, h);
    const font = getComputedStyle(document.body).fontFamily;
    ctx.font = `12px ${font}`;

    const pts = watch.points.slice();
    if (watch.latest && pts[pts.length - 1] !== watch.latest) pts.push(watch.latest);
    if (!pts.length) {
      ctx.fillStyle = '#6f8679';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText('the running mbb/g appears after the first hand', w / 2, h / 2);
      return;
    }

    // The first hands swing wildly; the scale follows the last 90% once there are enough.
    const from = pts.length >= 20 ? Math.floor(pts.length * 0.1) : 0;
    let lo = 0;
    let hi = 0;
    for (let i = from; i < pts.length; i++) {
      const p = pts[i];
      lo = Math.min(lo, p.y, p.lo ?? p.y);
      hi = Math.max(hi, p.y, p.hi ?? p.y);
    }
    if (hi - lo < 1) {
      hi += 1;
      lo -= 1;
    }
    const yStep = niceStep(hi - lo, 4);
    lo = Math.floor(lo / yStep) * yStep;
    hi = Math.ceil(hi / yStep) * yStep;
    const x0 = Math.min(pts[0].x, 0);
    const x1 = Math.max(pts[pts.length - 1].x, x0 + 1);

    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    let labelWidth = 0;
    for (let v = lo; v <= hi + yStep / 2; v += yStep) labelWidth = Math.max(labelWidth, ctx.measureText(shortNum(v)).width);
    const pad = { l: Math.ceil(labelWidth) + 14, r: 14, t: 22, b: 26 };
    const pw = w - pad.l - pad.r;
    const ph = h - pad.t - pad.b;
    const X = (x) => pad.l + ((x - x0) / (x1 - x0)) * pw;
    const Y = (y) => pad.t + (1 - (y - lo) / (hi - lo)) * ph;

    // grid and y labels
    ctx.lineWidth = 1;
    for (let v = lo; v <= hi + yStep / 2; v += yStep) {
      const y = Math.round(Y(v)) + 0.5;
      ctx.strokeStyle = Math.abs(v) < yStep / 1e6 ? 'rgba(233,240,234,0.55)' : 'rgba(255,255,255,0.07)';
      ctx.beginPath();
      ctx.moveTo(pad.l, y);
      ctx.lineTo(w - pad.r, y);
      ctx.stroke();
      ctx.fillStyle = '#9db2a6';
      ctx.fillText(shortNum(Math.abs(v) < yStep / 1e6 ? 0 : v), pad.l - 8, y);
    }
    // x labels
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const xStep = niceStep(x1 - x0, Math.max(2, Math.floor(pw / 90)));
    for (let v = Math.ceil(x0 / xStep) * xStep; v <= x1; v += xStep) {
      const x = X(v);
      ctx.strokeStyle = 'rgba(255,255,255,0.05)';
      ctx.beginPath();
      ctx.moveTo(Math.round(x) + 0.5, pad.t);
      ctx.lineTo(Math.round(x) + 0.5, pad.t + ph);
      ctx.stroke();
      ctx.fillStyle = '#9db2a6';
      ctx.fillText(shortNum(v), x, pad.t + ph + 7);
    }
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    ctx.fillStyle = '#6f8679';
    ctx.fillText(`mbb/g of ${playersOf()[0]} · 95% band`, pad.l, 14);
    ctx.textAlign = 'right';
    ctx.fillText('hands', w - pad.r, 14);

    ctx.save();
    ctx.beginPath();
    ctx.rect(pad.l, pad.t, pw, ph);
    ctx.clip();

    // the 95% band, in runs of points that carry one
    ctx.fillStyle = 'rgba(240,185,58,0.16)';
    let run = [];
    const flush = () => {
      if (run.length > 1) {
        ctx.beginPath();
        run.forEach((p, i) => (i ? ctx.lineTo(X(p.x), Y(p.hi)) : ctx.moveTo(X(p.x), Y(p.hi))));
        for (let i = run.length - 1; i >= 0; i--) ctx.lineTo(X(run[i].x), Y(run[i].lo));
        ctx.closePath();
        ctx.fill();
      }
      run = [];
    };
    for (const p of pts) {
      if (isNum(p.lo) && isNum(p.hi)) run.push(p);
      else flush();
    }
    flush();

    // the running mbb/g
    ctx.strokeStyle = '#f0b93a';
    ctx.lineWidth = 2;
    ctx.lineJoin = 'round';
    ctx.beginPath();
    pts.forEach((p, i) => (i ? ctx.lineTo(X(p.x), Y(p.y)) : ctx.moveTo(X(p.x), Y(p.y))));
    ctx.stroke();
    const last = pts[pts.length - 1];
    ctx.fillStyle = '#ffd577';
    ctx.beginPath();
    ctx.arc(X(last.x), Y(last.y), 3.5, 0, Math.PI * 2);
    ctx.fill();
    ctx.restore();
  }

  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(() => markWatch('chart')).observe($('bankroll'));
  }
  window.addEventListener('resize', () => markWatch('chart'));

  // ================================================================= start

  playSock = openSocket('/ws/play', onPlayMessage, onPlayState);
  showView(location.hash.slice(1));
  renderHistory([]);
  refreshControls();
  updateSetup();
})();
