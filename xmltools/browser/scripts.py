"""The small scripts the controller runs inside pages, kept apart from the Python that calls them.

``INIT``, installed in every document before the page's own scripts, lives in
:mod:`.instrument`; the scripts here read what it records (``SETTLE``,
``CONSOLE_TAIL``), find and describe elements, mark and mask secrets, and
scroll.
"""

from __future__ import annotations

import json

from .instrument import AMBIENT, CONSOLE_FORWARDED, INIT, MARK

__all__ = [
    "CONSOLE_FORWARDED",
    "CONSOLE_TAIL",
    "DESCRIBE",
    "HIT",
    "IDENTIFY",
    "INIT",
    "MARK",
    "SCROLL",
    "SCROLL_ELEMENT",
    "SECRET_MARK",
    "SECRET_MASK",
    "SETTLE",
    "SETTLE_START",
    "SETTLE_WAIT",
    "STATE",
]


SECRET = "data-xt-secret"

# The field that just received a secret (the focused one) is marked, to be masked in screenshots.
SECRET_MARK = f"""
() => {{
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return false;
  el.setAttribute('{SECRET}', '');
  return true;
}}
"""

# Paints the fields that received a secret over (on), or stops (off): text, dots and caret alike
# take the mask's colour, as Playwright's screenshot mask (#FF00FF) does.
SECRET_MASK = f"""
(on) => {{
  let style = document.getElementById('__xt_secret_mask');
  if (!on) {{ if (style) style.remove(); return false; }}
  if (!document.querySelector('[{SECRET}]')) return false;
  if (!style) {{
    style = document.createElement('style');
    style.id = '__xt_secret_mask';
    style.textContent = '[{SECRET}] {{ color: #FF00FF !important;'
      + ' -webkit-text-fill-color: #FF00FF !important; background: #FF00FF !important;'
      + ' caret-color: transparent !important; text-shadow: none !important;'
      + ' border-color: #FF00FF !important; }}';
    (document.head || document.documentElement).appendChild(style);
  }}
  return true;
}}
"""

# The count of console lines the document wrote since it began or since the last
# reading, and the last 25 of them as [type, text]; starts counting afresh.
CONSOLE_TAIL = """
() => {
  const st = window.__xt;
  if (!st || st.logs === undefined) return null;
  const say = (a) => {
    if (typeof a === 'string') return a;
    try {
      if (a instanceof Error) return String(a);
      if (a && typeof a === 'object') return JSON.stringify(a) ?? String(a);
    } catch (_) { /* a cycle, or a getter that throws */ }
    return String(a);
  };
  const tail = st.tail.slice(-25).map(([type, args]) => [type, args.map(say).join(' ').slice(0, 2000)]);
  const out = [st.logs, tail];
  st.logs = 0;
  st.heard = 0;
  st.tail = [];
  return out;
}
"""

# Removes the marks an action left, then resolves when the short timers pending at the start have
# run, no short timer is due within `quiet` ms (or late), and the DOM and the timers have been
# quiet for `quiet` ms, or when a cross-document
# navigation or a download has started, or when `max` ms have passed.  While an animation frame
# waits to run, quiet also takes FRAME_TURNS frames since the DOM's last change: a frame that is
# slow to paint (a heavy layer, a busy machine) would otherwise end the window between two frames
# of a short chain whose last one changes the page.  A chain of frames younger than AMBIENT is
# waited for while it draws on a canvas (a chart drawn growing touches no DOM); an older one is
# taken to run for ever and costs those few frames, no more, as do a chain that only ticks (an
# animation library's clock with nothing to move) and the changes of an element that script has
# moved for longer (see INIT); a hidden document runs no frames and is not waited for.  A CSS
# transition or animation, or one of the Web Animations API, that runs and ends within `max` is
# waited for too (a slide moving in, a dialog fading in), unless it only repaints (PAINT_ONLY: a
# button's colour on hover); one that runs for ever, or ends past `max`, is shown as it is.  Takes
# and resets the counters of navigations, downloads and new tabs.  `changed` says whether the DOM
# or a short timer moved after it began, an animation or an animation frame ran under it, or a
# frame still waits.
FRAME_TURNS = 3
PAINT_ONLY = [
    "accent-color",
    "background-color",
    "border-block-end-color",
    "border-block-start-color",
    "border-bottom-color",
    "border-color",
    "border-inline-end-color",
    "border-inline-start-color",
    "border-left-color",
    "border-right-color",
    "border-top-color",
    "box-shadow",
    "caret-color",
    "column-rule-color",
    "color",
    "fill",
    "outline-color",
    "stroke",
    "text-decoration-color",
    "text-emphasis-color",
    "text-shadow",
]
SETTLE = (
    """
async ([quiet, max, mark]) => {
  const st = window.__xt;
  const t0 = performance.now();
  const turns0 = st ? st.turns : 0;
  for (const el of document.querySelectorAll('[' + mark + ']')) el.removeAttribute(mark);
  const done = (settled) => {
    const out = { settled, waited: performance.now() - t0, navs: st.navs, crossNavs: st.crossNavs,
                  downloads: st.downloads, popups: st.popups, navUrl: st.navUrl,
                  changed: Math.max(st.last, st.lastTimer) > t0 || animated || st.turns > turns0
                    || (st.frames && st.frames.size > 0) };
    st.navs = st.crossNavs = st.downloads = st.popups = 0;
    return out;
  };
  if (!st) return { settled: true, waited: 0, navs: 0, crossNavs: 0, downloads: 0, popups: 0, navUrl: '' };
  let animated = false;
  const paintOnly = new Set("""
    + json.dumps(PAINT_ONLY)
    + """);
  const kebab = (p) => p.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
  const shown = (a) => {  // what the animation changes besides the colours
    if (a.transitionProperty) return !paintOnly.has(a.transitionProperty);
    const keys = new Set();
    for (const k of a.effect.getKeyframes()) for (const p of Object.keys(k)) keys.add(kebab(p));
    for (const p of ['offset', 'computed-offset', 'easing', 'composite']) keys.delete(p);
    return [...keys].some((p) => !paintOnly.has(p));
  };
  const moving = () => {  // an animation that changes what is shown runs and ends within the bound
    if (!st.anims || document.visibilityState === 'hidden') return false;
    const room = t0 + max - performance.now();
    try {
      for (const a of st.anims.call(document)) {
        if (a.playState !== 'running' || !a.effect) continue;
        const c = a.effect.getComputedTiming();
        const left = (c.endTime - (c.localTime || 0)) / (Math.abs(a.playbackRate) || 1);
        if (left > 0 && left <= room && shown(a)) return (animated = true);
      }
    } catch (e) {  // a page that broke the Web Animations API is not waited for by it
      return false;
    }
    return false;
  };
  // a frame waits a few turns after a change of the DOM, or a young chain of frames draws on a canvas
  const framing = (now) => {
    if (!st.frames || st.frames.size === 0 || document.visibilityState === 'hidden') return false;
    if (st.turns - st.lastTurn < """
    + str(FRAME_TURNS)
    + """) return true;
    for (const chain of st.frames.values()) {
      if (now - chain.born < """
    + str(AMBIENT)
    + """ && st.turns - chain.drew < """
    + str(FRAME_TURNS)
    + """) return true;
    }
    return false;
  };
  // a short timer due within the window, or late: one hop of a chain of short timers, which a
  // busy machine may fire later than the window lasts
  const soon = (now) => {
    for (const due of st.timers.values()) if (due <= now + quiet) return true;
    return false;
  };
  // let work the action queued run first: a form submission is planned as a task of its own
  for (let i = 0; i < 2; i++) await new Promise((r) => st.st(r, 0));
  const ids = [...st.timers.entries()].filter(([, due]) => due <= t0 + max).map(([id]) => id);
  for (;;) {
    const now = performance.now();
    if (st.crossNavs || st.downloads) return done(true);
    if (now - t0 >= max) return done(false);
    const pending = ids.some((id) => st.timers.has(id)) || soon(now) || framing(now) || moving()
      || (st.messages > 0 && now - st.lastPost < """
    + str(AMBIENT)
    + """);
    const idle = now - Math.max(st.last, st.lastTimer);
    if (!pending && idle >= quiet) return done(true);
    await new Promise((r) => st.st(r, pending ? 10 : Math.max(1, Math.min(quiet - idle, 20))));
  }
}
"""
)

# SETTLE, started and left running: its promise is kept on the page for SETTLE_WAIT.  Answers
# whether it started (a document without the init script has nothing to settle with).
SETTLE_START = f"""
(args) => {{
  const st = window.__xt;
  if (!st) return false;
  st.settling = ({SETTLE.strip()})(args);
  return true;
}}
"""

# The result of the SETTLE that SETTLE_START left running; null when this document has none (it
# is another document than the one it was started on).
SETTLE_WAIT = """
() => {
  const st = window.__xt;
  const running = st && st.settling;
  if (st) st.settling = null;
  return running || null;
}
"""

# The element under a point: null for none, '' for the page's background;
# otherwise its role and accessible name.  The element (or its nearest
# interactive ancestor) is marked, so that Python can act on it through a
# locator; SETTLE removes the mark after the action.
_DESCRIBE_FN = """
  const roleAndName = (el) => {
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || '').toLowerCase();
    const implicit = {
      a: el.hasAttribute('href') ? 'link' : '', button: 'button', textarea: 'textbox', img: 'img',
      select: el.multiple || el.size > 1 ? 'listbox' : 'combobox', summary: 'button', option: 'option',
      li: 'listitem', ul: 'list', ol: 'list', nav: 'navigation', dialog: 'dialog', table: 'table',
      h1: 'heading', h2: 'heading', h3: 'heading', h4: 'heading', h5: 'heading', h6: 'heading',
      tr: 'row', td: 'cell', th: 'columnheader', form: 'form',
    };
    const inputs = { checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton',
      search: 'searchbox', submit: 'button', reset: 'button', button: 'button', image: 'button',
      file: 'button' };
    const role = el.getAttribute('role')
      || (tag === 'input' ? (inputs[type] || 'textbox') : implicit[tag] || '');
    const text = (t) => (t || '').replace(/\\s+/g, ' ').trim();
    let name = text(el.getAttribute('aria-label'));
    if (!name && el.getAttribute('aria-labelledby')) {
      name = text(el.getAttribute('aria-labelledby').split(/\\s+/)
        .map((id) => (document.getElementById(id) || {}).textContent || '').join(' '));
    }
    if (!name && el.labels && el.labels.length) {
      name = text([...el.labels].map((l) => l.textContent).join(' '));
    }
    if (!name && tag === 'input' && ['submit', 'reset', 'button'].includes(type)) name = text(el.value);
    if (!name) name = text(el.getAttribute('alt') || el.getAttribute('title'));
    const field = tag === 'input' || tag === 'textarea' || tag === 'select';
    if (!name && !field) name = text(el.innerText || el.textContent);
    if (!name && field) name = text(el.getAttribute('placeholder'));
    return [role, name.slice(0, 80), tag];
  };
  const describe = (el) => {
    const [role, name, tag] = roleAndName(el);
    if (role) return name ? `${role} "${name}"` : role;
    return name ? `${tag} "${name}"` : tag;
  };
"""

# Who an element is: role and name, tag, identifying attributes, a short text,
# its box, and the locators that might find it again, best first (Playwright's
# order: test id, role and name, label, placeholder, text, CSS); the caller
# keeps those that match exactly one element.  The plain CSS ones are counted
# here (``counted``), in the same round trip; the others need Playwright's engines.
_IDENTIFY_FN = (
    _DESCRIBE_FN
    + """  const identify = (el) => {
"""
    + """    const [role, name, tag] = roleAndName(el);
    const q = (v) => JSON.stringify(v);
    const attrs = {};
    for (const a of ['id', 'name', 'data-testid', 'placeholder', 'href', 'type']) {
      const v = el.getAttribute(a);
      if (v) attrs[a] = v.slice(0, 200);
    }
    const label = el.labels && el.labels.length
      ? [...el.labels].map((l) => l.textContent).join(' ').replace(/\\s+/g, ' ').trim() : '';
    if (label) attrs.label = label.slice(0, 200);
    const own = (el.innerText || '').replace(/\\s+/g, ' ').trim();
    const out = [];
    if (attrs['data-testid']) out.push('testid=' + q(attrs['data-testid']));
    if (role && name) {
      const byRole = 'role=' + role + '[name=' + q(name) + 's]';
      out.push(byRole);
      // the same role and name inside the nearest ancestor with an id, and the nearest landmark: these
      // tell apart elements that share a name elsewhere on the page (a second "Save" in a footer)
      const marks = { MAIN: 'main', NAV: 'navigation', HEADER: 'banner', FOOTER: 'contentinfo',
                      ASIDE: 'complementary', FORM: 'form', DIALOG: 'dialog' };
      const kinds = ['main', 'navigation', 'banner', 'contentinfo', 'complementary', 'form', 'region',
                     'dialog'];
      let byId = '', byMark = '';
      for (let e = el.parentElement; e && e !== document.body && !(byId && byMark); e = e.parentElement) {
        if (!byId && e.id && /^[A-Za-z][\\w-]*$/.test(e.id)) byId = '#' + e.id + ' >> ' + byRole;
        const r0 = e.getAttribute('role') || marks[e.tagName];
        if (!byMark && kinds.includes(r0)) byMark = 'role=' + r0 + ' >> ' + byRole;
      }
      if (byId) out.push(byId);
      if (byMark) out.push(byMark);
    }
    if (label) out.push('label=' + q(label));
    if (attrs.placeholder) out.push('placeholder=' + q(attrs.placeholder));
    if (own && own.length <= 60 && !['input', 'textarea', 'select'].includes(tag)) out.push('text=' + q(own));
    if (attrs.id && /^[A-Za-z][\\w-]*$/.test(attrs.id)) out.push('#' + attrs.id);
    if (attrs.name) out.push(tag + '[name=' + q(attrs.name) + ']');
    const path = [];
    for (let e = el; e && e.nodeType === 1 && e !== document.documentElement; e = e.parentElement) {
      const t = e.tagName.toLowerCase();
      const same = e.parentElement
        ? [...e.parentElement.children].filter((c) => c.tagName === e.tagName) : [e];
      path.unshift(same.length > 1 ? `${t}:nth-of-type(${same.indexOf(e) + 1})` : t);
    }
    out.push('css=' + path.join(' > '));
    const r = el.getBoundingClientRect();
    const counted = {};
    for (const c of out) {
      const plain = /^(#|[a-z]+\\[name=)/.test(c) && !c.includes('>>');
      const css = c.startsWith('css=') ? c.slice(4) : plain ? c : '';
      if (!css) continue;
      try { counted[c] = document.querySelectorAll(css).length; } catch (_) { /* Playwright's to count */ }
    }
    return { described: describe(el), role, name, tag, attributes: attrs, text: own.slice(0, 80),
             box: [r.x, r.y, r.width, r.height], candidates: out, counted };
  };
"""
)
HIT = (
    """
([x, y, mark, identifying]) => {"""
    + _IDENTIFY_FN
    + """  const el = document.elementFromPoint(x, y);
  if (!el) return null;
  if (el === document.documentElement || el === document.body) return '';
  const sel = 'a[href],button,input,select,textarea,summary,label,option,[role],[onclick],[tabindex],'
    + '[contenteditable=""],[contenteditable="true"]';
  const target = (el.closest && el.closest(sel)) || el;
  for (const old of document.querySelectorAll('[' + mark + ']')) old.removeAttribute(mark);
  target.setAttribute(mark, '1');
  return identifying ? [describe(target), identify(target)] : describe(target);
}
"""
)

# The role and accessible name of one element, as the snapshot writes them
# (``textbox "Email"``), computed in the page for the common cases: asking
# Playwright for a snapshot of the element would replace the refs of the
# model's latest snapshot.
DESCRIBE = "(el) => {" + _DESCRIBE_FN + "  return describe(el);\n}"

IDENTIFY = "(el) => {" + _IDENTIFY_FN + "  return identify(el);\n}"

# Scroll what is under the point, as a mouse wheel would: the nearest element
# that can still scroll that way; inside an open modal dialog, never the page
# behind it; otherwise the page.  Returns how far it moved and what moved.
SCROLL = """
([x, y, dir]) => {
  const vertical = dir === 'up' || dir === 'down';
  const sign = dir === 'down' || dir === 'right' ? 1 : -1;
  const room = (el) => {
    const cs = getComputedStyle(el);
    if (!/(auto|scroll|overlay)/.test(vertical ? cs.overflowY : cs.overflowX)) return false;
    const max = vertical ? el.scrollHeight - el.clientHeight : el.scrollWidth - el.clientWidth;
    const pos = vertical ? el.scrollTop : el.scrollLeft;
    return max > 1 && (sign > 0 ? pos < max - 1 : pos > 0);
  };
  const name = (el) => {
    const label = el.getAttribute('aria-label') || el.id
      || (el.className && String(el.className).split(' ')[0]);
    return el.tagName.toLowerCase() + (label ? ` "${String(label).slice(0, 40)}"` : '');
  };
  const move = (el) => {
    const before = vertical ? el.scrollTop : el.scrollLeft;
    const page = vertical ? el.clientHeight : el.clientWidth;
    el.scrollBy({ [vertical ? 'top' : 'left']: sign * page, behavior: 'instant' });
    return (vertical ? el.scrollTop : el.scrollLeft) - before;
  };
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  };
  const root = document.scrollingElement || document.documentElement;
  const hit = document.elementFromPoint(x, y);
  for (let el = hit; el && el !== root && el !== document.body; el = el.parentElement) {
    if (room(el)) return { moved: move(el), what: name(el) };
  }
  const modal = [...document.querySelectorAll('dialog[open], [aria-modal="true"]')].filter(visible).pop();
  if (modal) {
    const inner = [modal, ...modal.querySelectorAll('*')].find(room);
    if (inner) return { moved: move(inner), what: name(inner) };
    return { moved: 0, what: 'modal' };
  }
  if (vertical) {
    const y0 = window.scrollY;
    window.scrollBy({ top: sign * window.innerHeight, behavior: 'instant' });
    return { moved: window.scrollY - y0, what: 'page' };
  }
  const x0 = window.scrollX;
  window.scrollBy({ left: sign * window.innerWidth, behavior: 'instant' });
  return { moved: window.scrollX - x0, what: 'page' };
}
"""

# Scroll an element's own scroll container by one of its pages in a direction,
# or, when it cannot scroll that way, bring it into view.
SCROLL_ELEMENT = """
(el, dir) => {
  const vertical = dir === 'up' || dir === 'down';
  const sign = dir === 'down' || dir === 'right' ? 1 : -1;
  for (let c = el; c && c !== document.body && c !== document.documentElement; c = c.parentElement) {
    const cs = getComputedStyle(c);
    if (!/(auto|scroll|overlay)/.test(vertical ? cs.overflowY : cs.overflowX)) continue;
    const max = vertical ? c.scrollHeight - c.clientHeight : c.scrollWidth - c.clientWidth;
    const pos = vertical ? c.scrollTop : c.scrollLeft;
    if (max > 1 && (sign > 0 ? pos < max - 1 : pos > 0)) {
      const page = vertical ? c.clientHeight : c.clientWidth;
      c.scrollBy({ [vertical ? 'top' : 'left']: sign * page, behavior: 'instant' });
      return 'scrolled';
    }
  }
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  return 'into view';
}
"""

# Whether an element can be acted on now: visible (it has a box and is not
# hidden by style) and enabled (no disabled control, no aria-disabled).
STATE = """
(el) => {
  const r = el.getBoundingClientRect();
  const cs = getComputedStyle(el);
  const visible = r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none';
  const off = el.closest('fieldset[disabled]');
  const enabled = !(el.disabled || (off && !off.querySelector('legend')?.contains(el))
    || el.closest('[aria-disabled="true"]'));
  return { visible, enabled };
}
"""


# Puts the caret after the text of an input or textarea (typing then appends to it).
CARET_TO_END = """
(el) => {
  if (typeof el.value === "string" && typeof el.setSelectionRange === "function") {
    try { el.setSelectionRange(el.value.length, el.value.length); } catch (e) { /* a type without a caret */ }
  }
}
"""
