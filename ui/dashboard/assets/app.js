// questbox dashboard: a client of the daemon's API (/api/...) and its
// websocket (/ws). No framework: the DOM is built with h() and text nodes,
// so nothing from the box is ever parsed as HTML.
'use strict';
(() => {
const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const STATUSES = ['proposed', 'pending', 'running', 'awaiting_consent', 'deferred', 'passed', 'explored', 'growing', 'aborted', 'exhausted',
  'council_pending', 'revising', 'team_blocked'];
// MARKS are the stage marks of a Team's strip (api.Mark.Symbol).
const MARKS = {done: '✓', rejected: '✗', failed: '✗', running: '…', waiting: '·'};

const st = {
  session: null,      // GET /session
  seq: 0,             // last event seq seen
  quests: new Map(),  // id -> api.Quest
  details: new Map(), // id -> api.QuestDetail
  results: new Map(), // id -> api.QuestResult: what the quest found
  consents: [],       // [api.Consent]
  device: null,       // api.Device
  events: [],         // newest last, at most 100
  open: new Map(),    // quest id -> graph <details> open?
  expanded: new Set(), // Team node ids whose stages the graph shows
  view: new Map(),    // quest id -> the graph's pan and zoom
  first: false,       // first render done
  pressed: '',        // what the last press of the virtual button did
  ws: null, backoff: 500,
};

// h builds an element: h('p', {class: 'x', onclick: f}, 'text', child...).
function h(tag, attrs, ...kids) {
  const el = tag.startsWith('svg:') ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v == null) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat(Infinity)) if (k != null && k !== false) el.append(k instanceof Node ? k : String(k));
  return el;
}

// fill replaces el's children, skipping null and false as h does.
function fill(el, ...kids) {
  el.replaceChildren(...kids.flat(Infinity).filter((k) => k != null && k !== false));
}

async function call(method, path, body) {
  const opt = {method, headers: {}, credentials: 'same-origin'};
  if (body !== undefined) { opt.headers['Content-Type'] = 'application/json'; opt.body = JSON.stringify(body); }
  if (method !== 'GET' && st.session && st.session.csrf) opt.headers['X-CSRF-Token'] = st.session.csrf;
  const r = await fetch(path, opt);
  const v = await r.json().catch(() => ({}));
  if (!r.ok) {
    const e = new Error((v.error && v.error.message) || r.status + ' ' + r.statusText);
    e.status = r.status;
    throw e;
  }
  return v;
}

// ---- tabs: one section at a time; a waiting consent shows above every tab ----

const TABS = ['quests', 'consents', 'box', 'software'];
st.tab = TABS.includes(location.hash.slice(1)) ? location.hash.slice(1) : 'quests';
function showTab(tab) {
  st.tab = tab;
  const read = !!(st.session && st.session.can_read);
  for (const t of TABS) {
    const b = $('tab-' + t);
    b.setAttribute('aria-selected', String(t === tab));
    b.tabIndex = t === tab ? 0 : -1;
    $(t + '-panel').hidden = !read || t !== tab;
  }
  $('consents').hidden = !read || st.consents.length === 0;
}
addEventListener('hashchange', () => { const t = location.hash.slice(1); if (TABS.includes(t)) showTab(t); });
for (const t of TABS) {
  $('tab-' + t).addEventListener('click', () => { showTab(t); history.replaceState(null, '', '#' + t); });
  $('tab-' + t).addEventListener('keydown', (e) => {
    const i = TABS.indexOf(t) + (e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0);
    if (i !== TABS.indexOf(t) && TABS[i]) { $('tab-' + TABS[i]).click(); $('tab-' + TABS[i]).focus(); }
  });
}

// ---- time: the viewer's local time with its zone; UTC in the title ----

const sameDay = (a, b) => a.toDateString() === b.toDateString();
function when(iso) {
  const d = new Date(iso);
  if (isNaN(d)) return iso || '';
  const opt = {hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short'};
  if (!sameDay(d, new Date())) Object.assign(opt, {year: 'numeric', month: 'short', day: 'numeric'});
  return h('time', {datetime: d.toISOString(), title: d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')},
    d.toLocaleString(undefined, opt));
}

function showError(msg) { const e = $('error'); e.textContent = msg || ''; e.hidden = !msg; }

// act runs a change and reports a refusal; the websocket brings the result.
async function act(method, path, body) {
  try { showError(''); return await call(method, path, body); } catch (e) {
    if (e.status === 401) { await refreshSession(); }
    showError(e.message);
  }
}

// ---- session and login ----

async function refreshSession() {
  st.session = await call('GET', '/session');
  const s = st.session;
  // Logged out: log in to read, or (public reading) to make changes.
  $('login').hidden = s.logged_in;
  $('login-h').textContent = s.can_read ? 'Log in to make changes' : 'Log in';
  $('logout').hidden = !s.logged_in;
  $('update-form').hidden = !s.logged_in;
  // Logged out without reading: the login alone, no empty sections.
  $('tabs').hidden = !s.can_read;
  showTab(st.tab);
  document.dispatchEvent(new Event('questbox:session'));
  return s;
}

$('login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  $('login-error').textContent = '';
  try {
    st.session = await call('POST', '/login', {password: $('password').value});
    $('password').value = '';
    await refreshSession();
    renderAll();
    connect();
  } catch (e) { $('login-error').textContent = e.message; }
});

$('logout').addEventListener('click', async () => {
  await act('POST', '/logout');
  await refreshSession();
  if (!st.session.can_read) { if (st.ws) st.ws.close(); clearState(); }
  renderAll();
});

const loggedIn = () => !!(st.session && st.session.logged_in);

function clearState() {
  st.quests.clear(); st.details.clear(); st.results.clear(); st.consents = []; st.device = null; st.events = [];
}

// ---- live: the websocket ----

function setConn(state, text) { const c = $('conn'); c.dataset.state = state; c.textContent = text; }

function connect() {
  if (st.ws && st.ws.readyState <= 1) return;
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws?since=' + st.seq;
  const ws = new WebSocket(url);
  st.ws = ws;
  ws.onopen = () => { st.backoff = 500; };
  ws.onmessage = (m) => { st.backoff = 500; onFrame(JSON.parse(m.data)); };
  ws.onclose = async () => {
    if (st.ws !== ws) return;
    setConn('reconnecting', 'reconnecting…');
    let s = null;
    try { s = await refreshSession(); } catch (e) { /* the daemon is away */ }
    if (s && !s.can_read) { setConn('offline', 'logged out'); clearState(); renderAll(); return; }
    setTimeout(connect, st.backoff);
    st.backoff = Math.min(st.backoff * 2, 5000);
  };
}

function onFrame(f) {
  if (f.type === 'snapshot') {
    setConn('live', 'live');
    st.quests = new Map(f.quests.map((q) => [q.id, q]));
    for (const id of [...st.details.keys()]) if (!st.quests.has(id)) st.details.delete(id);
    st.consents = f.consents;
    st.device = f.device;
    // A seq lower than the last one seen: another store (a salvage, a new
    // data directory). Its events are new, whatever their numbers.
    if (f.seq < st.seq) st.events = [];
    addEvents(f.events);
    st.seq = f.seq;
    renderAll();
    for (const id of st.quests.keys()) refetch(id);
    if (st.quests.size === 0) firstRender();
  } else if (f.type === 'events') {
    addEvents(f.events);
    const touched = new Set();
    let consents = false;
    for (const ev of f.events) {
      if (ev.seq > st.seq) st.seq = ev.seq;
      if (ev.kind === 'node' && ev.node) patchNode(ev.node, ev.to);
      if (ev.quest) touched.add(ev.quest);
      if (ev.consents_changed) consents = true; // the API's rule (api.Event.ConsentsChanged)
    }
    for (const id of touched) stale(id);
    if (consents) refetchConsents();
    renderEvents();
  } else if (f.type === 'device') {
    const sim = !!(st.device && st.device.button.simulated);
    st.device = f.device;
    renderDevice();
    if (sim !== f.device.button.simulated) renderConsents(); // how a card is answered
  }
}

function addEvents(evs) {
  for (const ev of evs || []) {
    if (st.events.length && ev.seq <= st.events[st.events.length - 1].seq) continue;
    st.events.push(ev);
  }
  if (st.events.length > 100) st.events.splice(0, st.events.length - 100);
}

// patchNode shows a node's new status at once, before its quest is fetched.
function patchNode(id, status) {
  if (!status) return;
  for (const g of document.querySelectorAll('[data-node="' + CSS.escape(id) + '"]')) {
    g.setAttribute('class', 'node ' + status);
    g.dataset.status = status;
  }
  for (const td of document.querySelectorAll('[data-node-status="' + CSS.escape(id) + '"]')) td.textContent = status;
}

// refetch brings a quest's card and graph up to date. Events mark it
// stale; it is fetched at most every REFETCH ms (the status a node event
// carries is on the page already, through patchNode), so a burst of events
// costs one fetch and one render, not one per event.
const REFETCH = 250;
const soon = new Map(); // quest id -> timer
function stale(id) {
  if (!soon.has(id)) soon.set(id, setTimeout(() => { soon.delete(id); refetch(id); }, REFETCH));
}

const inflight = new Map(); // quest id -> true while fetching, 'again' if more events came
async function refetch(id) {
  if (inflight.has(id)) { inflight.set(id, 'again'); return; }
  inflight.set(id, true);
  try {
    // The result rides along: an older daemon without it still shows
    // the graph.
    const [d, r] = await Promise.all([call('GET', '/api/quests/' + encodeURIComponent(id)),
      call('GET', '/api/quests/' + encodeURIComponent(id) + '/result').catch(() => null)]);
    st.details.set(id, d);
    if (r) st.results.set(id, r);
    st.quests.set(id, d.quest);
    renderQuest(id);
  } catch (e) {
    if (e.status === 404) { st.quests.delete(id); st.details.delete(id); renderQuests(); }
  } finally {
    const again = inflight.get(id) === 'again';
    inflight.delete(id);
    if (again) refetch(id);
    else if (!st.first && [...st.quests.keys()].every((q) => st.details.has(q))) firstRender();
  }
}

let consentsBusy = false;
async function refetchConsents() {
  if (consentsBusy) return;
  consentsBusy = true;
  try { st.consents = await call('GET', '/api/consents'); renderConsents(); renderQuests(); } catch (e) { /* next event retries */ }
  consentsBusy = false;
}

function firstRender() {
  if (st.first) return;
  st.first = true;
  document.body.dataset.ready = 'true';
  if (performance.mark) performance.mark('qb-first-render');
}

// ---- rendering ----

function renderAll() { renderConsents(); renderQuests(); renderDevice(); renderEvents(); }

// renderConsents shows each request as a card: what waits and why, then
// how to answer it, then what a yes approves. The answer comes before
// the evidence, so that on a phone it is on screen with the card; the
// evidence scrolls in its own box. Agent text goes in as text nodes (h),
// never as HTML.
function renderConsents() {
  const live = st.consents.filter((c) => !c.expired);
  $('consent-list').replaceChildren(...st.consents.map((c) => consentCard(c, live[0] === c)));
  $('consents').hidden = !(st.session && st.session.can_read) || st.consents.length === 0;
  $('consent-count').hidden = st.consents.length === 0;
  $('consent-count').textContent = st.consents.length;
  $('consent-none').hidden = st.consents.length > 0;
}

function consentCard(c, first) {
  const d = c.deliverable;
  const what = c.team ? c.role + ' of Team ' + c.team + ' (' + c.stage + ' stage)' : c.role;
  const approves = d.node + (d.verdict ? '’s ' + d.verdict : '’s answer');
  return h('li', {class: 'consent', 'data-consent': c.node},
    h('div', {class: 'consent-head'}, h('strong', null, c.node), ' ', what, ' · quest ', c.quest, ' · waiting ', c.age,
      c.expired ? h('span', {class: 'error'}, ' · expired') : c.expires_in_seconds != null ? ' · expires in ' + dur(c.expires_in_seconds) : ''),
    h('div', {class: 'consent-hyp'}, c.hypothesis),
    h('ul', {class: 'reasons', 'aria-label': 'Why it waits'}, c.reasons.map((r) => h('li', {'data-reason': r.kind, 'data-rule': r.rule || null, 'data-level': r.level || null},
      h('span', {class: 'reason-text'}, r.text),
      r.source || r.quote ? h('div', {class: 'hint'}, 'cited ', h('code', null, r.source), ': “', r.quote, '”') : null))),
    consentActions(c, first),
    h('details', {class: 'deliverable', open: true},
      h('summary', null, 'What a yes approves: ', approves, d.evidence_cut ? ' (the end of ' + d.evidence_bytes + ' bytes)' : ''),
      d.evidence_cut ? h('div', {class: 'hint', 'data-cut': 'true'}, '… its start is cut; the whole evidence is in ',
        h('button', {type: 'button', class: 'link', onclick: () => openNode(d.node)}, d.node + '’s detail')) : null,
      d.evidence ? h('pre', {class: 'evidence', 'data-evidence': c.node}, d.evidence) : h('p', {class: 'muted'}, 'No evidence recorded.'),
      d.citations.length ? h('ul', {class: 'citations'}, d.citations.map((ct) => h('li', null, h('code', null, ct.source), ': “', ct.quote, '”'))) :
        h('p', {class: 'hint'}, 'No citations.'),
      d.citations_more ? h('p', {class: 'hint'}, 'and ', d.citations_more, ' more citations') : null),
    h('div', {class: 'hint'}, 'claim ', h('code', {title: c.claim_hash}, c.claim_hash.slice(0, 12)), ' — a yes is bound to it'));
}

// consentActions is how this page answers a request: the dashboard's own
// approve and reject where the owner enabled dashboard consent, else the
// virtual button on the sim backend (it answers the oldest live request),
// else the box's button.
function consentActions(c, first) {
  const a = (...kids) => h('div', {class: 'actions consent-actions', 'data-actions': c.node}, kids);
  if (c.expired) return a(h('span', {class: 'hint'}, 'Expired: the node goes back to pending at the next tick.'));
  if (st.session && st.session.consent && loggedIn()) {
    return a(
      h('button', {type: 'button', class: 'approve', onclick: () => act('POST', '/api/consents/' + enc(c.node) + '/approve', {claim_hash: c.claim_hash})}, 'Approve'),
      h('button', {type: 'button', class: 'danger', onclick: () => act('POST', '/api/consents/' + enc(c.node) + '/reject', {claim_hash: c.claim_hash})}, 'Reject'));
  }
  const sim = st.device && st.device.button.simulated;
  if (!first) return a(h('span', {class: 'hint'}, 'The button answers the oldest request first.'));
  if (sim && loggedIn()) {
    return a(
      h('button', {type: 'button', class: 'approve', 'data-press': 'long', onclick: () => press({hold: '2s', times: 1})}, 'Approve (hold the button 2 s)'),
      h('button', {type: 'button', class: 'danger', 'data-press': 'triple', onclick: () => press({times: 3})}, 'Reject (press it 3×)'),
      h('span', {class: 'hint', role: 'status', 'data-pressed': ''}, st.pressed));
  }
  if (sim) return a(h('span', {class: 'hint'}, 'Log in to press the virtual button: hold it 2 s to approve, press it 3 times to reject.'));
  return a(h('span', {class: 'hint', 'data-button': 'real'}, 'Hold the button on the box 2 s to approve; press it 3 times to reject.'));
}

const enc = encodeURIComponent;

function dur(s) {
  s = Math.max(0, Math.round(s));
  const hh = Math.floor(s / 3600), mm = Math.floor(s % 3600 / 60), ss = s % 60;
  return (hh ? hh + 'h' : '') + (hh || mm ? mm + 'm' : '') + ss + 's';
}

function renderQuests() {
  const root = $('quests');
  if (st.quests.size === 0) {
    root.replaceChildren(h('p', {class: 'muted'}, st.session && st.session.can_read ? 'No quests yet. Create one below (logged in), or on the box: questbox quest new NAME --direction TEXT' : 'Log in to see the quests.'));
    return;
  }
  const have = new Set();
  for (const id of st.quests.keys()) {
    have.add(id);
    let card = document.getElementById('quest-' + id);
    if (!card) { card = h('article', {class: 'card', id: 'quest-' + id, 'data-quest': id}); root.append(card); }
    fillQuest(card, id);
  }
  for (const el of [...root.children]) if (!el.dataset.quest || !have.has(el.dataset.quest)) el.remove();
}

function renderQuest(id) {
  const card = document.getElementById('quest-' + id);
  if (!card) { renderQuests(); return; }
  fillQuest(card, id);
}

function fillQuest(card, id) {
  const q = st.quests.get(id), d = st.details.get(id);
  const pending = st.consents.filter((c) => c.quest === id).length;
  const counts = STATUSES.filter((s) => q.counts[s]).map((s) => q.counts[s] + ' ' + s.replaceAll('_', ' '));
  const open = st.open.has(id) ? st.open.get(id) : true;
  const graph = h('details', {open, ontoggle: (e) => st.open.set(id, e.target.open)},
    h('summary', null, 'Graph (' + q.nodes + ' nodes)'),
    d ? [renderGraph(d), legend(d), nodeTable(d)] : h('p', {class: 'muted'}, 'Loading the graph…'));
  fill(card, 
    h('header', null,
      h('h3', null, q.name),
      h('span', {class: 'badge ' + q.status, 'data-quest-status': id}, q.status),
      h('span', {class: 'muted'}, q.id + ' · ' + (q.level || q.mode) + ' · ' + q.provider + (q.provider === 'demo' ? ' (demo: canned answers, no real agent)' : ''))),
    q.reason ? h('p', {class: q.needs_attention ? 'error' : 'muted'}, q.reason) : null,
    h('p', {class: 'muted'}, q.direction),
    resultSection(id),
    h('div', {class: 'facts-row'},
      h('span', null, 'runs ', q.used.agent_runs, '/', q.limits.max_agent_runs),
      h('span', null, 'tokens ', q.used.tokens, '/', q.limits.token_budget),
      h('span', null, 'wall clock ', q.used.wall_clock, '/', q.limits.wall_clock),
      h('span', null, 'remaining: ', q.remaining.agent_runs, ' runs, ', q.remaining.wall_clock),
      h('span', {class: pending ? 'error' : ''}, pending, ' pending consent', pending === 1 ? '' : 's')),
    h('div', {class: 'counts'}, counts.join(' · ') || 'no nodes yet', q.running ? ' · running ' + q.running : ''),
    loggedIn() ? h('div', {class: 'actions'},
      q.status === 'active' ? h('button', {type: 'button', onclick: () => act('POST', '/api/quests/' + enc(id) + '/stop')}, 'Stop') : null,
      q.status === 'stopped' ? h('button', {type: 'button', onclick: () => act('POST', '/api/quests/' + enc(id) + '/resume')}, 'Resume') : null) : null,
    window.questboxQuestActions ? window.questboxQuestActions(q) : null,
    graph);
}

// ---- the quest's result: what it found (api.QuestResult) ----

// resultSection is the top of a quest's card: how the quest ended, its
// owner's closing statement, and its findings, conclusions first. The
// agent's text is capped by the API and put in the page as text nodes.
function resultSection(id) {
  const r = st.results.get(id);
  if (!r) return h('section', {class: 'result', 'data-result': id}, h('p', {class: 'muted'}, 'Loading what the quest found…'));
  const groups = [['conclusion', 'Conclusions'], ['growing', 'Growing (kept)'], ['dead_end', 'Dead ends']];
  const e = r.ending;
  return h('section', {class: 'result', 'data-result': id, 'aria-label': 'What quest ' + id + ' found'},
    h('h4', null, 'What it found'),
    e ? h('p', {'data-ending': e.how}, e.text, e.reason && e.how !== 'finish' ? ' (' + e.reason + ')' : '') : null,
    e && e.statement ? h('figure', {class: 'statement'}, h('figcaption', {class: 'hint'}, 'The owner\'s closing statement'),
      h('blockquote', {class: 'agent-text', 'data-statement': id}, e.statement), e.statement_cut ? h('div', {class: 'hint'}, e.statement_cut) : null) : null,
    h('p', {class: 'headline', 'data-headline': id}, r.headline, r.open ? ' · ' + r.open + ' node' + (r.open === 1 ? '' : 's') + ' still open' : ''),
    r.findings.length ? groups.map(([kind, title]) => {
      const fs = r.findings.filter((f) => f.kind === kind);
      return h('div', {class: 'group', 'data-group': kind}, h('h5', null, title + ' (' + fs.length + ')'),
        fs.length ? h('ol', {class: 'findings'}, fs.map(findingItem)) : h('p', {class: 'muted'}, 'none'));
    }) : null,
    r.closed.length ? h('details', {class: 'closed'}, h('summary', null, 'Closed without a finding (' + r.counts.closed + ')'),
      h('ul', null, r.closed.map((c) => h('li', {'data-closed': c.node}, c.node + ' ' + c.role + ', ' + c.status + ': ', h('span', {class: 'agent-text'}, c.hypothesis),
        h('div', {class: 'hint agent-text'}, c.reason)))),
      r.closed_more ? h('p', {class: 'hint'}, 'and ' + r.closed_more + ' more') : null) : null);
}

// findingItem is one finding: the node and Team that produced it, the
// gate's verdict and who approved it, its evidence and its citations.
function findingItem(f) {
  const a = f.approval, t = f.team;
  return h('li', {class: 'finding', 'data-finding': f.node, 'data-kind': f.kind},
    h('div', null, h('button', {type: 'button', class: 'link', onclick: () => openNode(f.node)}, f.node), ' ',
      t ? t.kind + ' Team' : f.role, ' · ', f.status.replaceAll('_', ' ')),
    t && t.executer ? h('div', {class: 'hint'}, 'delivered by executer ' + t.executer + ', accepted by accepter ' + t.accepter +
      (t.revisions ? ' · revisions before the accept: ' + t.revisions : '')) : null,
    h('div', {class: 'agent-text hyp'}, f.hypothesis),
    h('div', {class: 'gate', 'data-gate': f.gate, 'data-approved': String(f.human_approved)}, 'gate: ' + f.gate +
      (a ? ', ' + a.text + ' at ' : ''), a ? when(a.at) : null, a && a.node !== f.node ? ' (on ' + a.node + ')' : ''),
    f.why ? h('div', {class: 'hint'}, f.why) : null,
    f.review.length ? h('ul', {class: 'facts'}, f.review.map((x) => h('li', null, h('pre', {class: 'fact', 'data-level': x.level}, x.text)))) : null,
    h('pre', {class: 'evidence agent-text', 'data-evidence': f.node}, f.evidence),
    f.evidence_cut ? h('div', {class: 'hint', 'data-cut': f.node}, f.evidence_cut) : null,
    f.citations.length ? h('ol', {class: 'citations', 'data-citations': f.node}, f.citations.map((c) => h('li', null,
      h('code', {class: 'agent-text', 'data-source': ''}, c.source), ' ', h('q', {class: 'agent-text', 'data-quote': ''}, c.quote), c.cut ? ' (cut)' : ''))) :
      h('div', {class: 'hint'}, 'no citations'),
    f.citations_more ? h('div', {class: 'hint'}, 'and ' + f.citations_more + ' more citations: questbox export has them') : null);
}

// ---- the graph: a layered tree in plain SVG, fit to its box, panned and zoomed ----

// The geometry is in CSS pixels at zoom 1. Every node owns a column
// COL wide (a folded Team's strip may take more) and a row as tall as its
// row's tallest node; what a node draws stays inside its column and row,
// so no label, strip, crown or council caption can overlap another.
// Edges run in the gaps between rows and down a node's own column, and
// text is drawn on the graph's background (a halo), so where an edge
// must pass a caption it passes under it.
const R = 14, COL = 112, LABEL_W = 98, LINE = 15, GAP = 26, CHIP = 22, PADX = 8, PADY = 8;
const LABEL_PX = 12, SMALL_PX = 11;
// KMIN keeps the labels at 11 px or more when the graph is fit to a phone.
const KMIN = 11.25 / LABEL_PX, KMAX = 2.5;

const meas = document.createElement('canvas').getContext('2d');
function textW(s, px, weight) {
  meas.font = (weight || 400) + ' ' + px + 'px ' + getComputedStyle(document.body).fontFamily;
  return meas.measureText(s).width;
}
// clip cuts s to fit width w, with an ellipsis when cut.
function clip(s, w, px, weight) {
  if (textW(s, px, weight) <= w) return s;
  let lo = 0, hi = s.length;
  while (lo < hi) { const m = (lo + hi + 1) >> 1; if (textW(s.slice(0, m) + '…', px, weight) <= w) lo = m; else hi = m - 1; }
  return s.slice(0, lo).trimEnd() + '…';
}
// shortLines is the short form of a hypothesis: two lines of at most
// LABEL_W, by words, the rest cut with an ellipsis.
function shortLines(text, lines) {
  const words = String(text || '').replace(/\s+/g, ' ').trim().split(' ').filter((w) => w);
  const out = [];
  while (words.length && out.length < lines) {
    let line = words.shift();
    while (words.length && textW(line + ' ' + words[0], LABEL_PX) <= LABEL_W) line += ' ' + words.shift();
    out.push(out.length === lines - 1 && words.length ? clip(line + ' ' + words.join(' '), LABEL_W, LABEL_PX) : clip(line, LABEL_W, LABEL_PX));
  }
  return out;
}

// folds is what the graph folds: each Team's stage nodes (hidden unless
// the Team is expanded), by node id, and each council member's vote.
function folds(d) {
  const team = new Map(), stageOf = new Map(), mark = new Map(), member = new Map();
  for (const t of d.teams || []) {
    team.set(t.id, t);
    for (const s of t.stages) { stageOf.set(s.id, t.id); mark.set(s.id, s); }
  }
  for (const c of d.councils || []) for (const m of c.members) member.set(m.id, m);
  return {team, stageOf, mark, member};
}

// layout places nodes as a layered tree: depth down, leaves left to right
// in id order, each parent centred over its children. A node as wide as
// span(n) columns takes that many.
function layout(shown, span) {
  const byId = new Map(shown.map((n) => [n.id, n]));
  const kids = new Map();
  const roots = [];
  const num = (id) => parseInt(id.replace(/\D/g, ''), 10) || 0;
  for (const n of [...shown].sort((a, b) => num(a.id) - num(b.id))) {
    if (n.parent && byId.has(n.parent)) {
      if (!kids.has(n.parent)) kids.set(n.parent, []);
      kids.get(n.parent).push(n);
    } else roots.push(n);
  }
  const pos = new Map();
  let next = 0, maxDepth = 0;
  const place = (n, depth) => {
    maxDepth = Math.max(maxDepth, depth);
    const ch = kids.get(n.id) || [];
    const w = span(n);
    let x;
    if (ch.length === 0) { x = next + (w - 1) / 2; next += w; }
    else {
      const start = next;
      const xs = ch.map((c) => place(c, depth + 1));
      x = (xs[0] + xs[xs.length - 1]) / 2;
      // A parent wider than its children's columns keeps its own room.
      if (next - start < w) { x = start + (w - 1) / 2; next = start + w; }
    }
    pos.set(n.id, {col: x, row: depth});
    return x;
  };
  for (const r of roots) place(r, 0);
  return {pos, cols: Math.max(next, 1), rows: maxDepth + 1};
}

// box is what a node draws around its circle: how far up (its crown,
// its Team's kind, a member's badge) and down (its strip, its vote, its
// stage's decision and its label), and how wide.
function box(n, f, folded) {
  const t = f.team.get(n.id), m = f.member.get(n.id), sm = f.mark.get(n.id);
  let up = R + 6, down = R + 4, wide = LABEL_W;
  const kind = t ? clip(t.kind + (folded(t) ? ' ▸' : ' ▾'), LABEL_W, SMALL_PX) : '';
  if (n.role === 'owner') up += 12;
  if (t) up += 15;
  const strip = t && folded(t) ? t.stages.length * CHIP : 0;
  if (strip) { down += 18; wide = Math.max(wide, strip); }
  const rev = t && folded(t) && t.revision_count ? 'rev ' + t.revision_count + '/' + t.max_revisions : '';
  if (rev) down += LINE;
  const vote = m ? m.vote || (m.status === 'running' ? '…' : '') : '';
  if (vote) down += LINE;
  const stage = sm ? clip(sm.stage + ' ' + MARKS[sm.mark] + (sm.revision_count ? ' (rev ' + sm.revision_count + ')' : ''), LABEL_W, LABEL_PX) : '';
  if (stage) down += LINE;
  const lines = shortLines(n.hypothesis, stage ? 1 : 2);
  down += lines.length * LINE;
  return {up, down, wide, kind, strip, rev, vote, stage, lines};
}

function renderGraph(d) {
  const f = folds(d);
  const folded = (t) => !st.expanded.has(t.id);
  const shown = d.nodes.filter((n) => !f.stageOf.has(n.id) || !folded(f.team.get(f.stageOf.get(n.id))));
  const boxes = new Map(shown.map((n) => [n.id, box(n, f, folded)]));
  const span = (n) => Math.max(1, Math.ceil((boxes.get(n.id).wide + 12) / COL));
  const {pos, cols, rows} = layout(shown, span);
  // Each row is as tall as its tallest node; the gap above it holds a
  // council's caption.
  const up = new Array(rows).fill(0), down = new Array(rows).fill(0);
  for (const n of shown) { const b = boxes.get(n.id), r = pos.get(n.id).row; up[r] = Math.max(up[r], b.up); down[r] = Math.max(down[r], b.down); }
  const cy = [];
  let y = PADY + GAP;
  for (let r = 0; r < rows; r++) { cy.push(y + up[r]); y += up[r] + down[r] + GAP; }
  const W = cols * COL + 2 * PADX, H = y - GAP + PADY + 4;
  const at = (id) => { const p = pos.get(id); return {x: PADX + COL / 2 + p.col * COL, y: cy[p.row], row: p.row}; };
  const top = (r) => cy[r] - up[r], bottom = (r) => cy[r] + down[r];
  const svg = h('svg:svg', {viewBox: '0 0 ' + W + ' ' + H, role: 'img',
    'aria-label': 'Graph of quest ' + d.quest.id + ': ' + d.nodes.length + ' nodes', 'data-graph': d.quest.id});
  for (const c of d.councils || []) if (pos.has(c.owner)) svg.append(councilHull(c, at, pos, top, bottom));
  const edged = new Set();
  const link = (a, b, rel) => svg.append(edge(at(a), at(b), boxes.get(a), boxes.get(b), rel, top, bottom));
  for (const e of d.edges) {
    if (!pos.has(e.from) || !pos.has(e.to)) continue;
    edged.add(e.from + '>' + e.to);
    if (edged.has(e.to + '>' + e.from)) continue; // a member's reply: the council_of edge already links them
    link(e.from, e.to, e.relation);
  }
  for (const n of shown) if (n.parent && pos.has(n.parent) && !edged.has(n.parent + '>' + n.id)) link(n.parent, n.id, 'spawned');
  for (const n of shown) svg.append(nodeG(d, n, at(n.id), boxes.get(n.id), f, folded));
  // A Team just tapped stays in view as its stages unfold below it.
  const focus = st.focus && pos.has(st.focus) ? at(st.focus) : null;
  if (focus) st.focus = null;
  return graphBox(d.quest.id, svg, W, H, focus);
}

function nodeG(d, n, p, b, f, folded) {
  const t = f.team.get(n.id), m = f.member.get(n.id), sm = f.mark.get(n.id);
  const toggle = () => { if (st.expanded.has(n.id)) st.expanded.delete(n.id); else st.expanded.add(n.id); st.focus = n.id; renderQuest(d.quest.id); };
  const activate = t ? toggle : () => openNode(n.id);
  let label = n.id + ' ' + n.role + ', ' + statusWords(n) + ': ' + n.hypothesis;
  if (t) label += '. Team ' + t.kind + ', stages ' + t.stages.map((s) => s.stage + ' ' + s.mark).join(', ') + (folded(t) ? ' (activate to expand)' : ' (activate to fold)');
  if (m) label += '. Council ' + m.role + ' on ' + (m.provider || 'the quest provider') + (m.vote ? ', votes ' + m.vote : ', no vote yet') + (m.dissent ? ', dissent: ' + m.dissent : '');
  const g = h('svg:g', {class: 'node ' + n.status, 'data-node': n.id, 'data-status': n.status, tabindex: 0, role: 'button',
    'aria-label': label, 'aria-expanded': t ? String(!folded(t)) : null, 'data-team': t ? t.id : null,
    'data-folded': t ? String(folded(t)) : null,
    onclick: activate, onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); activate(); } }},
  h('svg:title', null, label),
  h('svg:circle', {cx: p.x, cy: p.y, r: R}),
  h('svg:text', {class: 'id', x: p.x, y: p.y}, clip(n.id, 2 * R - 2, SMALL_PX)));
  let above = p.y - R - 6;
  if (n.role === 'owner') {
    const x = p.x;
    g.append(h('svg:path', {class: 'crown', d: 'M' + (x - 8) + ' ' + above + 'l2-8 3 5 3-7 3 7 3-5 2 8z', 'aria-hidden': 'true'}));
    above -= 12;
  }
  if (t) g.append(h('svg:text', {class: 'team-kind', x: p.x, y: above - 6, 'aria-hidden': 'true'}, b.kind));
  const badge = m ? memberBadge(m, p) : null;
  let below = p.y + R + 4;
  // The captions under the node sit on the graph's background: an edge
  // that has to pass them passes under them.
  const lw = Math.max(b.strip, ...[b.rev, b.vote, b.stage].filter((x) => x).map((x) => textW(x, LABEL_PX, 600)),
    ...b.lines.map((l) => textW(l, LABEL_PX, 600)));
  g.append(h('svg:rect', {class: 'bg', x: p.x - lw / 2 - 3, y: below - 1, width: lw + 6, height: p.y + b.down - below + 1, 'aria-hidden': 'true'}));
  const line = (cls, text, attrs) => { const el = h('svg:text', Object.assign({class: cls, x: p.x, y: below + LINE / 2, 'aria-hidden': 'true'}, attrs), text); below += LINE; return el; };
  if (b.strip) { g.append(strip(t, p.x - b.strip / 2, below)); below += 18; }
  if (b.rev) g.append(line('rev', b.rev, {'text-anchor': 'middle'}));
  if (b.vote) badge.append(line('vote-text vote-' + (m.vote || 'none'), b.vote + (m.dissent ? ' ⚑' : '')));
  if (sm) g.append(line('stage-label ' + sm.mark, b.stage, {'data-stage-label': sm.stage}));
  b.lines.forEach((l, i) => g.append(line('label' + (i === 0 && !sm ? ' first' : ''), l, {'data-label': n.id})));
  if (badge) g.append(badge); // over the captions' background, with its vote
  return g;
}

// strip is a folded Team's stages under its node: a chip per stage with
// its first letter and mark.
function strip(t, x0, y) {
  const g = h('svg:g', {class: 'strip', 'data-strip': t.id, 'aria-hidden': 'true'});
  t.stages.forEach((s, i) => {
    const x = x0 + i * CHIP;
    g.append(h('svg:g', {class: 'chip ' + s.mark, 'data-stage': s.stage, 'data-mark': s.mark},
      h('svg:title', null, s.stage + ': ' + (s.mark === 'rejected' ? 'rejected' : s.mark)),
      h('svg:rect', {x: x + 1, y, width: CHIP - 2, height: 16, rx: 3}),
      h('svg:text', {x: x + CHIP / 2, y: y + 8}, s.stage[0].toUpperCase() + MARKS[s.mark])));
  });
  return g;
}

// memberBadge is a council member's badge: J judge, R reviewer.
function memberBadge(m, p) {
  return h('svg:g', {class: 'vote', 'data-member': m.id, 'data-vote': m.vote || '', 'aria-hidden': 'true'},
    h('svg:circle', {class: 'badge-' + m.role, cx: p.x + R - 2, cy: p.y - R + 2, r: 7}),
    h('svg:text', {class: 'badge-letter', x: p.x + R - 2, y: p.y - R + 2}, m.role === 'judge' ? 'J' : 'R'));
}

// councilHull is the rounded box around an owner and its council; its
// caption sits in the gap above the owner's row, clear of the crown.
function councilHull(c, at, pos, top, bottom) {
  const pts = [c.owner, ...c.members.map((m) => m.id)].filter((id) => pos.has(id)).map(at);
  const x1 = Math.min(...pts.map((p) => p.x)) - COL / 2 + 1, x2 = Math.max(...pts.map((p) => p.x)) + COL / 2 - 1;
  const y1 = top(at(c.owner).row) - GAP + 4, y2 = Math.max(...pts.map((p) => bottom(p.row))) + 4;
  return h('svg:g', {class: 'council', 'data-council': c.owner, 'aria-hidden': 'true'},
    h('svg:rect', {x: x1, y: y1, width: x2 - x1, height: y2 - y1, rx: 12}),
    h('svg:text', {x: x1 + 8, y: y1 + 10, 'dominant-baseline': 'central'}, clip('council' + (c.phase ? ' · ' + c.phase : ''), x2 - x1 - 16, SMALL_PX)));
}

// edge leaves a node under its label and enters the other over its
// crown: down its own column, across in the gap between rows.
function edge(a, b, ba, bb, rel, top, bottom) {
  const y1 = a.y + ba.down, y4 = b.y - bb.up;
  let d;
  if (b.row > a.row) {
    const y2 = bottom(a.row) + 2, y3 = top(b.row) - 2, my = (y2 + y3) / 2;
    d = 'M' + a.x + ' ' + y1 + 'V' + y2 + 'C' + a.x + ' ' + my + ' ' + b.x + ' ' + my + ' ' + b.x + ' ' + y3 + 'V' + y4;
  } else {
    // Back up or across (a rejection, a promotion): under both rows, then up.
    const lane = bottom(a.row) + GAP / 2, yb = b.y + bb.down;
    d = 'M' + a.x + ' ' + y1 + 'V' + lane + 'H' + b.x + 'V' + yb;
  }
  return h('svg:path', {class: 'edge ' + rel, d, 'data-relation': rel});
}

// graphBox is the graph's frame: the drawing fit to the frame's width
// (never below KMIN: then it pans), dragged with a pointer, zoomed with
// the buttons, two fingers or ctrl+wheel (a trackpad's pinch). The view of each quest
// is kept across redraws; until it is moved it follows the fit.
function graphBox(id, svg, W, H, focus) {
  const frame = h('div', {class: 'graph', 'data-graph-box': id});
  let v = st.view.get(id);
  if (!v) { v = {x: 0, y: 0, k: 1, fit: true}; st.view.set(id, v); }
  const apply = () => {
    // Until the frame is on the page, the width it had before a redraw.
    const cw = frame.clientWidth || v.cw;
    if (!cw) return;
    v.cw = cw;
    if (v.fit) v.k = Math.min(1.25, Math.max(KMIN, cw / W));
    const vw = cw / v.k;
    const ph = Math.min(H * v.k, Math.max(260, innerHeight * 0.7));
    const vh = ph / v.k;
    if (focus) { v.x = focus.x - vw / 2; v.y = Math.min(v.y, focus.y - 60); focus = null; if (W > vw) v.fit = false; }
    v.x = Math.max(Math.min(v.x, W - vw), Math.min(0, (W - vw) / 2));
    v.y = Math.max(Math.min(v.y, H - vh), Math.min(0, (H - vh) / 2));
    if (v.fit && W <= vw) v.x = (W - vw) / 2;
    svg.setAttribute('viewBox', v.x + ' ' + v.y + ' ' + vw + ' ' + vh);
    svg.setAttribute('height', Math.round(ph));
    svg.dataset.zoom = v.k.toFixed(3);
  };
  const zoom = (factor, cx, cy) => {
    const cw = frame.clientWidth, rect = svg.getBoundingClientRect();
    const px = cx == null ? cw / 2 : cx - rect.left, py = cy == null ? rect.height / 2 : cy - rect.top;
    const k = Math.min(KMAX, Math.max(0.2, v.k * factor));
    v.x += px / v.k - px / k; v.y += py / v.k - py / k;
    v.k = k; v.fit = false; apply();
  };
  const btn = (text, label, f) => h('button', {type: 'button', 'aria-label': label, title: label, onclick: f}, text);
  frame.append(svg);
  const bar = h('div', {class: 'zoom'}, h('span', {class: 'hint'}, 'Drag to move'),
    btn('+', 'Zoom in', () => zoom(1.25)), btn('−', 'Zoom out', () => zoom(0.8)),
    btn('⤢', 'Fit the width', () => { v.fit = true; v.x = v.y = 0; apply(); }));
  // A drag pans; a tap (no move) stays a tap on the node under it; two
  // fingers pinch the zoom around their middle.
  let drag = null;
  const fingers = new Map(); // pointer id -> its last point
  const spread = () => { const [a, b] = [...fingers.values()]; return Math.hypot(a.x - b.x, a.y - b.y); };
  svg.addEventListener('pointerdown', (e) => {
    fingers.set(e.pointerId, {x: e.clientX, y: e.clientY});
    if (fingers.size === 1) { delete svg.dataset.dragged; drag = {x: e.clientX, y: e.clientY, vx: v.x, vy: v.y, moved: false, id: e.pointerId}; }
    else if (fingers.size === 2) { drag = null; svg.dataset.dragged = 'true'; svg.setPointerCapture(e.pointerId); }
  });
  svg.addEventListener('pointermove', (e) => {
    if (fingers.size === 2 && fingers.has(e.pointerId)) {
      const before = spread();
      fingers.set(e.pointerId, {x: e.clientX, y: e.clientY});
      const [a, b] = [...fingers.values()];
      if (before > 0) zoom(spread() / before, (a.x + b.x) / 2, (a.y + b.y) / 2);
      return;
    }
    if (!drag || e.pointerId !== drag.id) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 5) return;
    if (!drag.moved) { drag.moved = true; svg.dataset.dragged = 'true'; svg.setPointerCapture(e.pointerId); }
    v.x = drag.vx - dx / v.k; v.y = drag.vy - dy / v.k; v.fit = false; apply();
  });
  const end = (e) => { fingers.delete(e.pointerId); drag = null; };
  svg.addEventListener('pointerup', end); svg.addEventListener('pointercancel', end);
  svg.addEventListener('click', (e) => { if (svg.dataset.dragged) { e.stopPropagation(); } }, true);
  svg.addEventListener('wheel', (e) => { if (!e.ctrlKey && !e.metaKey) return; e.preventDefault(); zoom(e.deltaY < 0 ? 1.1 : 0.9, e.clientX, e.clientY); }, {passive: false});
  apply();
  new ResizeObserver(apply).observe(frame);
  return [frame, bar];
}

// STATUS_WORDS says each status in plain words, once: the graph's key
// and a node's detail read them.
const STATUS_WORDS = {
  proposed: 'an idea waiting for the owner to promote it',
  pending: 'queued: an agent will take it',
  running: 'an agent is working on it now',
  awaiting_consent: 'its answer waits for your yes',
  deferred: 'waiting for the network to check its sources',
  passed: 'its answer passed the gate; the owner will weigh it',
  explored: 'done: it reached a conclusion',
  growing: 'done, and kept: it spawned follow-up work',
  aborted: 'stopped: a dead end, or stopped by hand',
  exhausted: 'stopped: it failed the gate too many times',
  council_pending: 'the owner waits for its council’s votes',
  revising: 'its Team is redoing the work after a rejection',
  team_blocked: 'stopped: its Team was rejected too many times',
};
const statusWords = (n) => n.status.replaceAll('_', ' ');

function legend(d) {
  const here = new Set(d.nodes.map((n) => n.status));
  return [h('p', {class: 'legend'}, 'Tap a node for its full text and status. ♛ owner · J/R council judge and reviewer · a Team’s strip: P plan, E exec, A accept (✓ done, ✗ rejected, … running); tap a Team to show its stages.'),
    h('details', {class: 'key'}, h('summary', null, 'What the colours mean'),
      h('dl', {class: 'statuses'}, STATUSES.map((s) => [h('dt', {'data-key': s, class: here.has(s) ? 'here' : null}, h('span', {class: 'sw s-' + s}), s.replaceAll('_', ' ')),
        h('dd', null, STATUS_WORDS[s])])))];
}

function nodeTable(d) {
  return h('details', null, h('summary', null, 'Nodes as a table'),
    h('table', null,
      h('thead', null, h('tr', null, ['Node', 'Role', 'Status', 'Tries', 'Outcome', 'Hypothesis'].map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', null, d.nodes.map((n) => h('tr', null,
        h('td', null, h('button', {type: 'button', onclick: () => openNode(n.id)}, n.id)),
        h('td', null, n.role), h('td', {'data-node-status': n.id}, n.status),
        h('td', null, n.tries + '/' + d.quest.limits.max_tries), h('td', {'data-outcome': n.id}, outcomeWords(n)),
        h('td', {class: 'hyp'}, n.hypothesis))))));
}

// outcomeWords is a node's last word: a Team stage's decision (an
// accepter's accept or reject), else the gate's.
function outcomeWords(n) {
  if (n.stage && n.verdict) return n.verdict;
  return n.outcome || '';
}

// ---- node detail ----

let shown = null; // node id in the dialog
async function openNode(id) {
  shown = id;
  const dlg = $('node');
  $('node-h').textContent = 'Node ' + id;
  $('node-body').replaceChildren(h('p', {class: 'muted'}, 'Loading…'));
  if (!dlg.open) dlg.showModal();
  try {
    const n = await call('GET', '/api/nodes/' + enc(id));
    if (shown === id) $('node-body').replaceChildren(nodeDetail(n));
  } catch (e) { $('node-body').replaceChildren(h('p', {class: 'error'}, e.message)); }
}
$('node').addEventListener('close', () => { shown = null; });

// facts renders facts one per line and the feedback after them when it
// says more: byte for byte what `questbox quest show` prints and the agent
// got in its next prompt.
function facts(list, feedback, adds) {
  return [list.length ? h('ul', {class: 'facts'}, list.map((f) => h('li', null, h('pre', {class: 'fact', 'data-level': f.level}, f.text)))) : null,
    adds && feedback ? [h('div', {class: 'hint'}, 'feedback:'), h('pre', {class: 'feedback'}, feedback)] : null];
}

function nodeDetail(n) {
  const row = (k, v) => v === '' || v == null ? null : [h('dt', null, k), h('dd', null, v)];
  return h('div', {'data-detail': n.id},
    h('dl', null,
      row('quest', n.quest), row('role', n.role),
      row('status', h('span', {'data-status-words': n.status}, h('span', {class: 'detail-status'}, statusWords(n)), STATUS_WORDS[n.status] ? ': ' + STATUS_WORDS[n.status] : '')),
      row('parent', n.parent), row('tries', String(n.tries)),
      // A Team stage decides (an accepter's accept or reject); the gate's
      // PASS only says its answer was well formed.
      n.stage && n.verdict ? row('decision', h('strong', {'data-decision': n.verdict}, n.verdict)) : null,
      row(n.stage && n.verdict ? 'gate' : 'outcome', n.outcome), n.stage ? null : row('verdict', n.verdict), row('claim hash', n.claim_hash ? h('code', null, n.claim_hash) : ''),
      row('provider', n.provider), row('phase', n.phase), row('team kind', n.team_kind), row('team', n.team), row('stage', n.stage),
      row('revisions', n.max_revisions ? (n.revision_count || 0) + '/' + n.max_revisions : ''),
      row('waiting', n.waiting), row('reason', n.reason)),
    h('h3', null, 'Hypothesis'), h('pre', {class: 'hypothesis'}, n.hypothesis),
    n.evidence ? [h('h3', null, 'Evidence'), h('pre', {class: 'evidence'}, n.evidence)] : null,
    n.citations.length ? [h('h3', null, 'Citations'), h('ul', null, n.citations.map((c) => h('li', null, h('code', null, c.source), ': “', c.quote, '”')))] : null,
    n.new_directions.length ? [h('h3', null, 'New directions'), h('ul', null, n.new_directions.map((t) => h('li', null, t)))] : null,
    n.facts.length || (n.feedback_adds && n.feedback) ? [h('h3', null, 'Facts'), h('div', {class: 'node-facts'}, facts(n.facts, n.feedback, n.feedback_adds))] : null,
    n.attempts.length ? [h('h3', null, 'Attempts'), h('ol', {class: 'attempts'}, n.attempts.map((a) => h('li', null,
      h('div', null, when(a.at), ' · ', a.outcome, a.run ? ' · run ' + a.run : '', a.try_used ? ' · try used' : '', a.repeats ? ' · ×' + (a.repeats + 1) : ''),
      facts(a.facts, a.feedback, a.facts.length === 0 || a.feedback !== n.feedback)))) ] : null,
    window.questboxRuns ? window.questboxRuns(n) : null,
    loggedIn() && !n.terminal ? h('div', {class: 'actions'}, h('button', {type: 'button', class: 'danger', onclick: async () => {
      if (!confirm('Abort ' + n.id + '? An aborted node is never dispatched again.')) return;
      const v = await act('POST', '/api/nodes/' + enc(n.id) + '/abort', {reason: 'aborted from the dashboard'});
      if (v) $('node-body').replaceChildren(nodeDetail(v));
    }}, 'Abort node')) : null);
}

// ---- the box ----

function renderDevice() {
  const d = st.device;
  const leds = $('leds');
  const names = ['green', 'amber', 'red'];
  leds.querySelectorAll('.led').forEach((el, i) => { el.dataset.pattern = d ? d[names[i]].pattern : 'off'; });
  leds.setAttribute('aria-label', 'LEDs: ' + (d ? names.map((n) => n + ' ' + d[n].pattern).join(', ') : 'unknown'));
  const body = $('device-body');
  if (!d) { body.replaceChildren(h('p', {class: 'muted'}, 'No daemon state yet.')); return; }
  const s = d.state;
  fill(body,
    h('div', {class: 'leds big', role: 'img', 'aria-label': leds.getAttribute('aria-label')},
      names.map((n) => h('span', {class: 'led ' + n, 'data-pattern': d[n].pattern, title: n + ': ' + d[n].pattern}))),
    h('dl', null,
      h('dt', null, 'LEDs'), h('dd', null, names.map((n) => n + ' ' + d[n].pattern).join(' · ')),
      h('dt', null, 'backend'), h('dd', null, d.backend + (d.button.simulated ? ' (simulated LEDs and button)' : '')),
      h('dt', null, 'network'), h('dd', {'data-network': d.network.online ? 'online' : 'offline'}, d.network.online ? 'online' : 'offline'),
      h('dt', null, 'MQTT'), h('dd', null, !d.broker.configured ? 'not configured' : d.broker.connected ? 'connected' : 'disconnected' + (d.broker.error ? ': ' + d.broker.error : '')),
      h('dt', null, 'agents running'), h('dd', null, String(s.agents_running)),
      h('dt', null, 'consents pending'), h('dd', null, String(s.consents_pending)),
      s.quests_needing_attention ? [h('dt', null, 'need attention'), h('dd', {class: 'error'}, String(s.quests_needing_attention) + ' quest(s)')] : null,
      s.fault ? [h('dt', null, 'fault'), h('dd', {class: 'error'}, s.fault)] : null,
      d.halted ? [h('dt', null, 'halted'), h('dd', {class: 'error'}, d.halted)] : null),
    d.button.simulated && loggedIn() ? h('div', {class: 'actions', 'aria-label': 'Virtual button'},
      h('button', {type: 'button', 'data-press': 'short', onclick: () => press({times: 1})}, 'Press'),
      h('button', {type: 'button', 'data-press': 'long', onclick: () => press({hold: '2s', times: 1})}, 'Hold 2 s (approve)'),
      h('button', {type: 'button', 'data-press': 'triple', class: 'danger', onclick: () => press({times: 3})}, 'Press 3× (reject)')) : null,
    h('p', {id: 'press-result', class: 'hint', role: 'status'}, st.pressed));
}

async function press(req) {
  const v = await act('POST', '/api/device/press', req);
  // Kept in the state: the box's section is redrawn whenever the box changes.
  if (v) {
    st.pressed = v.map((p) => p.press + ': ' + p.outcome).join('; ');
    $('press-result').textContent = st.pressed;
    for (const el of document.querySelectorAll('[data-pressed]')) el.textContent = st.pressed;
  }
}

// ---- software: the running version, the one kept for rollback, an upload ----

async function loadUpdate() {
  let u;
  try { u = await call('GET', '/api/update'); } catch (e) { return; }
  fill($('update-body'),
    h('dt', null, 'running'), h('dd', {'data-version': 'running'}, u.running),
    u.trial ? [h('dt', null, 'on trial'), h('dd', {'data-version': 'trial'}, u.trial)] : null,
    h('dt', null, 'kept for rollback'), h('dd', {'data-version': 'rollback'}, u.rollback || 'none'),
    u.last ? [h('dt', null, 'last update'), h('dd', null, u.last)] : null);
  $('update-form').hidden = !loggedIn();
}

$('update-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const form = new FormData();
  form.append('binary', $('update-binary').files[0]);
  if ($('update-sig').files[0]) form.append('signature', $('update-sig').files[0]);
  const headers = {};
  if (st.session && st.session.csrf) headers['X-CSRF-Token'] = st.session.csrf;
  $('update-result').textContent = 'uploading…';
  const r = await fetch('/api/update', {method: 'POST', body: form, headers, credentials: 'same-origin'});
  const v = await r.json().catch(() => ({}));
  $('update-result').textContent = r.ok ? 'installed ' + v.trial + ' on trial; the box restarts into it' :
    ((v.error && v.error.message) || r.status + ' ' + r.statusText);
});

// ---- events ----

function eventText(ev) {
  const t = '';
  switch (ev.kind) {
    case 'node': return t + ' ' + ev.quest + ' ' + ev.node + ' ' + (ev.role || '') + (ev.team ? ' of Team ' + ev.team + (ev.stage ? ' (' + ev.stage + ')' : '') : '') +
      (ev.phase ? ' [' + ev.phase + ']' : '') + ' ' + (ev.from || 'new') + ' → ' + ev.to + (ev.reason ? '  (' + ev.reason + ')' : '');
    case 'verdict': return t + ' ' + ev.quest + ' ' + ev.node + ' verdict ' + ev.outcome + (ev.facts ? '  ' + ev.facts.map((f) => f.text).join('; ') : '');
    case 'quest': return t + ' ' + ev.quest + ' quest ' + (ev.from || 'new') + ' → ' + ev.to + (ev.reason ? '  (' + ev.reason + ')' : '');
    case 'consent': return t + ' ' + ev.quest + ' ' + ev.node + ' consent ' + ev.outcome + (ev.reason ? '  (' + ev.reason + ')' : '');
    default: return t + ' ' + ev.kind + ' ' + ev.outcome + (ev.detail ? '  ' + ev.detail : '');
  }
}

function renderEvents() {
  const li = (ev) => h('li', {'data-seq': ev.seq}, when(ev.time), eventText(ev));
  $('events').replaceChildren(...st.events.slice().reverse().map(li));
  $('consent-history').replaceChildren(...st.events.filter((ev) => ev.kind === 'consent').reverse().slice(0, 20).map(li));
}

// The page's second script (runs.js: new quests, seeding, exports, runs
// and logs) uses these.
window.questbox = {h, fill, call, act, enc, loggedIn, when};

// ---- start ----

(async () => {
  try {
    const s = await refreshSession();
    renderAll();
    if (s.can_read) { connect(); loadUpdate(); } else setConn('offline', 'log in');
  } catch (e) {
    setConn('reconnecting', 'the box does not answer');
    setTimeout(() => location.reload(), 5000);
  }
})();
})();
