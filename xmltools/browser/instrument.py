"""The script installed in every document before the page's own: what the controller learns of a page.

``INIT`` records, in ``window.__xt``:

- the time of the last DOM mutation (marks the controller sets are ignored);
- the short timers the page scheduled (``setTimeout`` up to a second), so
  that settling can wait for work the page announced;
- the chains of animation frames, the drawing on canvases, and the messages a
  page's scheduler sends itself, so that settling can tell work that ends from
  motion that runs for ever;
- every navigation the document starts, from the Navigation API's
  ``navigate`` event, which fires synchronously for link clicks, form
  submits, ``location`` changes, meta refresh and history changes, and says
  whether the navigation stays in the same document or is a download;
- new tabs asked for (``window.open``, links and forms with a target);
- the console lines the document wrote, as a count and the last 25 (their
  arguments, turned into text only when read by ``CONSOLE_TAIL``): the
  session stops listening to a flooding page and reads what it missed here.

Kept in a module of its own: it is the one script the page runs before its own,
and the largest.
"""

from __future__ import annotations

__all__ = ["AMBIENT", "CONSOLE_FORWARDED", "INIT", "MARK", "STREAK_GAP"]

MARK = "data-xt-mark"

# Console lines a document sends on to the DevTools protocol between two readings of its tail
# (CONSOLE_TAIL); past that, it counts them and keeps the last ones itself.  Each line sent on
# costs the browser, the driver and Python a message: a page that writes 100,000 of them as it
# loads would take seconds to be heard.
CONSOLE_FORWARDED = 200

# Motion written by script (not CSS): an element whose attributes keep changing, and a chain of
# animation frames that draws on a canvas, are waited for while they are younger than AMBIENT ms;
# so are the messages a page's scheduler sends itself through a MessageChannel.  Older, they are
# taken to run for ever and hold no wait: a looping animation would otherwise hold every action to
# its bound.  An element's changes, and the messages, belong to one run while they come at most
# STREAK_GAP ms apart.
AMBIENT = 1500
STREAK_GAP = 250

INIT = (
    """
(() => {
  if (window.__xt) return;
  const st = window.__xt = {
    last: 0, lastTimer: 0, timers: new Map(), st: window.setTimeout.bind(window),
    anims: Document.prototype.getAnimations || null,  // taken before the page can replace it
    navs: 0, crossNavs: 0, downloads: 0, popups: 0, navUrl: '', logs: 0, tail: [], heard: 0,
  };
  for (const [name, type] of [['log', 'log'], ['info', 'info'], ['warn', 'warning'], ['error', 'error'],
                              ['debug', 'debug'], ['trace', 'trace'], ['dir', 'dir']]) {
    const f = console[name];
    if (typeof f !== 'function') continue;
    console[name] = function (...args) {
      st.logs++;
      st.tail.push([type, args]);
      if (st.tail.length > 50) st.tail.splice(0, 25);
      if (st.heard >= """
    + str(CONSOLE_FORWARDED)
    + """) return undefined;  // counted here, and kept in the tail
      st.heard++;
      return f.apply(this, args);
    };
  }
  const ct = window.clearTimeout.bind(window);
  // the run of animation frames whose callback is running now (a chain: each frame asks for the
  // next, or sets a short timer that does); a chain's age tells a short animation from one that
  // runs for ever
  let current = null;
  st.draws = 0;  // drawing calls on a canvas, 2D or WebGL
  // `due` is when the callback was due to run: the changes it makes are judged as made then (see
  // `noted`), for a busy machine may run it late, or stall the page while it runs
  const within = (chain, fn, self, args, due) => {
    const outer = current;
    const draws = st.draws;
    current = chain;
    try {
      return fn.apply(self, args);
    } finally {
      current = outer;
      if (chain && st.draws !== draws) chain.drew = st.turns;
      noted(observer.takeRecords(), due);
    }
  };
  for (const [name, methods] of [
    ['CanvasRenderingContext2D', ['clearRect', 'drawImage', 'fill', 'fillRect', 'fillText', 'putImageData',
                                  'stroke', 'strokeRect', 'strokeText']],
    ['WebGLRenderingContext', ['clear', 'drawArrays', 'drawElements']],
    ['WebGL2RenderingContext', ['clear', 'drawArrays', 'drawArraysInstanced', 'drawElements',
                                'drawElementsInstanced', 'drawRangeElements']],
  ]) {
    const proto = window[name] && window[name].prototype;
    for (const m of proto ? methods : []) {
      const f = proto[m];
      if (typeof f === 'function') proto[m] = function () { st.draws++; return f.apply(this, arguments); };
    }
  }
  window.setTimeout = function (fn, delay, ...args) {
    const d = Number(delay) || 0;
    if (typeof fn !== 'function' || d > 1000) return st.st(fn, delay, ...args);
    const chain = current;
    const due = performance.now() + d;
    const id = st.st(function () {
      st.timers.delete(id);
      st.lastTimer = performance.now();
      return within(chain, fn, this, arguments, due);
    }, delay, ...args);
    st.timers.set(id, due);
    return id;
  };
  window.clearTimeout = function (id) { st.timers.delete(id); return ct(id); };
  // animation frames asked for and not yet run, each with its chain (the time it was born, the
  // turn it last drew on a canvas): a capture taken while one waits may miss its change.  `turns`
  // counts the frames that ran a callback of the page (one time stamp per frame), `lastTurn` is
  // that count at the DOM's last change.
  st.frames = new Map();
  const FRAME = 17;  // a frame asked for is due within one frame, at 60 a second
  st.turns = 0;
  st.lastTurn = 0;
  let stamp = -1;
  const raf = window.requestAnimationFrame && window.requestAnimationFrame.bind(window);
  const caf = window.cancelAnimationFrame && window.cancelAnimationFrame.bind(window);
  if (raf && caf) {
    window.requestAnimationFrame = function (fn) {
      const chain = current || { born: performance.now(), drew: -Infinity };
      const due = performance.now() + FRAME;
      const id = raf(function (ts) {
        if (ts !== stamp) { stamp = ts; st.turns++; }
        st.frames.delete(id);
        return within(chain, fn, this, arguments, due);
      });
      st.frames.set(id, chain);
      return id;
    };
    window.cancelAnimationFrame = function (id) { st.frames.delete(id); return caf(id); };
  }
  // work a page sends itself to do later, each piece counting as a short timer's firing: a message
  // to a port of the page or to the window (a scheduler's next slice of work: React's, for a
  // transition).  Until such pieces have come to one receiver (a port, the window) for """
    + str(AMBIENT)
    + """ ms, each
  // asked for at most """
    + str(STREAK_GAP)
    + """ ms after the one before ran or by the one before: then it is a scheduler
  // that never idles.  A piece asked for by the one before continues the streak however long that
  // one ran: a long slice, or a machine too busy to run the page, is no pause.  A piece on its way
  // and not yet run is pending, as a short timer is (a busy machine may run no slice for longer
  // than the quiet window), for """
    + str(AMBIENT)
    + """ ms after the last one was sent.
  st.messages = 0;  // pieces on their way, the last sent at st.lastPost
  st.lastPost = 0;
  // a run of events on one key (a receiver, an element), each asked for at `at` (by default, when
  // it happens) at most """
    + str(STREAK_GAP)
    + """ ms after the one before: how old the run is, this event counted
  const streak = (runs, key, now, at = now) => {
    const run = runs.get(key);
    if (run && at - run[1] <= """
    + str(STREAK_GAP)
    + """) {
      run[1] = now;
      return now - run[0];
    }
    runs.set(key, [now, now]);
    return 0;
  };
  const runs = new WeakMap();  // a receiver -> [first, last] piece of its current streak
  const queued = new WeakMap();  // a receiver -> its pieces on their way: [asked for at, pending]
  let running = null;  // the receiver whose piece this task runs, until a timer clears it
  const ran = () => { running = null; };
  const sent = (to) => {
    const now = performance.now();
    const run = runs.get(to);
    const at = run && running === to ? run[1] : now;
    const young = !run || at - run[1] > """
    + str(STREAK_GAP)
    + """ || now - run[0] < """
    + str(AMBIENT)
    + """;
    let q = queued.get(to);
    if (!q) queued.set(to, (q = []));
    q.push([at, young]);
    if (!young) return;
    st.messages++;
    st.lastPost = now;
  };
  const arrived = (to) => {  // the oldest piece on its way is no longer: when it was asked for
    const piece = (queued.get(to) || []).shift();
    if (!piece) return undefined;
    if (piece[1]) st.messages--;
    return piece[0];
  };
  const heard = (to) => {  // a piece runs now
    const now = performance.now();
    const at = arrived(to);
    if (running === null) st.st(ran, 0);
    running = to;
    if (streak(runs, to, now, at) < """
    + str(AMBIENT)
    + """) st.lastTimer = now;
  };
  const listen = EventTarget.prototype.addEventListener;
  const Port = window.MessagePort;
  const Channel = window.MessageChannel;
  if (Port && Channel && typeof Port.prototype.postMessage === 'function') {
    const proto = Port.prototype;
    const partner = new WeakMap();  // port -> the other port of its channel
    const hearing = new WeakSet();  // the ports the page listens to: ours listens before the page's
    const attach = (p) => {
      if (hearing.has(p)) return;
      hearing.add(p);
      listen.call(p, 'message', () => heard(p));
    };
    window.MessageChannel = class MessageChannel extends Channel {
      constructor() {
        super();
        partner.set(this.port1, this.port2);
        partner.set(this.port2, this.port1);
      }
    };
    const post = proto.postMessage;
    proto.postMessage = function () {
      const to = partner.get(this);
      if (to && hearing.has(to)) sent(to);
      return post.apply(this, arguments);
    };
    proto.addEventListener = function (type) {
      if (type === 'message') attach(this);
      return listen.apply(this, arguments);
    };
    const onmessage = Object.getOwnPropertyDescriptor(proto, 'onmessage');
    if (onmessage && onmessage.set) {
      Object.defineProperty(proto, 'onmessage', {
        configurable: true,
        enumerable: onmessage.enumerable,
        get: onmessage.get,
        set(fn) {
          if (typeof fn === 'function') attach(this);
          onmessage.set.call(this, fn);
        },
      });
    }
  }
  // the window's messages: any caller may be another frame, whose message is no piece of this
  // page's work but must not stay pending
  const wpost = window.postMessage;
  window.postMessage = function () {
    sent(window);
    return wpost.apply(this === undefined ? window : this, arguments);
  };
  listen.call(window, 'message', (e) => (e.source === window ? heard(window) : arrived(window)), true);
  // an element whose attributes have changed again and again, never """
    + str(STREAK_GAP)
    + """ ms apart, for """
    + str(AMBIENT)
    + """ ms
  // or more moves for ever (a looping animation written by script): its changes are not news.  A
  // change made by a timer or a frame counts as made when that one was due: a frame a busy machine
  // ran late, or stalled, is no pause of the loop.
  const streaks = new WeakMap();
  const noted = (records, at) => {
    const now = performance.now();
    let news = false;
    for (const r of records) {
      if (r.type === 'attributes') {
        if (r.attributeName === 'data-xt-mark') continue;
        if (streak(streaks, r.target, now, at) >= """
    + str(AMBIENT)
    + """) continue;
      }
      news = true;
    }
    if (!news) return;
    st.last = now;
    st.lastTurn = st.turns;
  };
  const observer = new MutationObserver((records) => noted(records));
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  if (window.navigation) {
    window.navigation.addEventListener('navigate', (e) => {
      st.navs++;
      st.navUrl = e.destination.url;
      if (e.downloadRequest !== null && e.downloadRequest !== undefined) st.downloads++;
      else if (!e.destination.sameDocument) st.crossNavs++;
    });
  }
  const open = window.open;
  window.open = function (...args) { st.popups++; return open.apply(this, args); };
  const blank = (t) => !['', '_self', '_parent', '_top'].includes(t || '');
  document.addEventListener('click', (e) => {
    const a = e.target && e.target.closest ? e.target.closest('a[href]') : null;
    if (a && !a.hasAttribute('download') && blank(a.target)) st.popups++;
  }, true);
  document.addEventListener('submit', (e) => {
    const f = e.target;
    if (f && blank((e.submitter && e.submitter.getAttribute('formtarget')) || f.target)) st.popups++;
  }, true);
})();
"""
)
