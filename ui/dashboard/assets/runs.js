// questbox dashboard, second part: quests from the phone (create one with
// every option `questbox quest new` has, seed it, download its export) and
// what the agents did (a node's runs, a run's log, live while it runs).
// Every change is the same API call the CLI makes; the API's message is
// shown as it is, so a refusal reads as it does on the CLI.
'use strict';
(() => {
const {h, fill, call, act, enc, loggedIn, when} = window.questbox;
const $ = (id) => document.getElementById(id);

// ---- a new quest ----

// The presets are the box's (GET /api/presets: the table `quest new
// --preset` reads). A preset names flags of `quest new`; FIELDS maps a
// flag to the form's input where it differs from the flag's name with
// "_" for "-". Like --preset, a preset fills only the fields left empty;
// choosing another preset first empties the fields the previous one
// filled and nobody changed since.
const FIELDS = {'checkpoint': 'checkpoints', 'council-provider': 'council_providers', 'role-provider': 'role_providers'};
const field = (flag) => $('nq-' + (FIELDS[flag] || flag.replaceAll('-', '_')));
const presets = new Map(); // name -> {flag: value}
let filled = new Map(); // input -> the value the current preset put there

const presetSelect = $('nq-preset');
presetSelect.append(h('option', {value: 'none'}, 'none'));
let loading = null; // the presets' request, once it is asked
function loadPresets() {
  if (loading || !loggedIn()) return;
  loading = call('GET', '/api/presets').then((list) => {
    for (const p of list) {
      presets.set(p.name, p.flags);
      presetSelect.append(h('option', {value: p.name, title: p.help}, p.name + ' (' + p.help + ')'));
    }
  }, () => { loading = null; }); // asked again at the next session change
}
// The selects offer what the box has (GET /api/choices); their first
// option, and an empty field's placeholder, say the box's default, which
// an empty field takes.
let choosing = null;
function loadChoices() {
  if (choosing || !loggedIn()) return;
  choosing = call('GET', '/api/choices').then((c) => {
    const d = c.defaults;
    for (const el of document.querySelectorAll('#new-quest-form select[data-choices]')) {
      const key = el.id.slice(3);
      fill(el, h('option', {value: ''}, 'default: ' + d[key]), c[el.dataset.choices].map((v) => h('option', {value: v}, v)));
    }
    for (const el of document.querySelectorAll('#new-quest-form input[data-default]')) {
      const v = d[el.dataset.default];
      el.placeholder = 'default: ' + (Array.isArray(v) ? v.join(', ') || 'none' : v);
    }
    fill($('nq-role-list'), c.roles.map((r) => h('option', {value: r})));
  }, () => { choosing = null; });
}
const valueOf = (el) => el.type === 'checkbox' ? String(el.checked) : el.value;
function setValue(el, v) { if (el.type === 'checkbox') el.checked = v === 'true'; else el.value = v; }
const empty = (el) => el.type === 'checkbox' ? !el.checked : el.value.trim() === '';
// A preset picked before the box's choices arrived waits for them: a
// select takes only a value it has an option for.
presetSelect.addEventListener('change', () => Promise.resolve(choosing).then(() => {
  for (const [el, v] of filled) if (valueOf(el) === v) setValue(el, el.type === 'checkbox' ? 'false' : '');
  filled = new Map();
  for (const [flag, v] of Object.entries(presets.get(presetSelect.value) || {})) {
    const el = field(flag);
    if (!el || !empty(el)) continue;
    setValue(el, v);
    filled.set(el, valueOf(el));
  }
}));

const list = (s) => s.split(',').map((x) => x.trim()).filter((x) => x);

// pairs reads "K=V,K=V" (what --council-provider and --role-provider
// take) into an object; bad(part) is the message of a malformed part and
// twice(key) of a key given twice (null: the last one wins).
function pairs(s, bad, twice) {
  const out = {};
  for (const part of list(s)) {
    const i = part.indexOf('=');
    const k = i < 0 ? '' : part.slice(0, i).trim(), val = i < 0 ? '' : part.slice(i + 1).trim();
    if (k === '' || val === '') throw new Error(bad(part));
    if (twice && k in out) throw new Error(twice(k));
    out[k] = val;
  }
  return out;
}

// newQuest is the request of POST /api/quests from the form: a field left
// empty is left out, and takes the box's default, as a flag left out does.
// What the CLI checks before asking the box is checked here, with its
// words; the rest is the box's answer, as the CLI shows it.
function newQuest() {
  const v = (id) => $('nq-' + id).value.trim();
  const req = {name: v('name'), direction: v('direction')};
  for (const k of ['mode', 'provider', 'gate', 'wall_clock', 'project', 'council', 'accept_mode']) if (v(k) !== '') req[k] = v(k);
  for (const k of ['max_agent_runs', 'max_tries', 'token_budget', 'max_revisions']) if (v(k) !== '') req[k] = Number(v(k));
  for (const k of ['roles', 'checkpoints', 'gates', 'egress']) if (v(k) !== '') req[k] = list(v(k));
  if (v('council_providers') !== '') {
    req.council_providers = pairs(v('council_providers'),
      () => '--council-provider ' + JSON.stringify(v('council_providers')) + ': want KIND=PROVIDER,... (e.g. reviewer=gemini,judge=codex)', null);
  }
  if (v('role_providers') !== '') {
    req.role_providers = pairs(v('role_providers'),
      (part) => 'quest new: --role-provider ' + JSON.stringify(part) + ' is not ROLE=PROVIDER (e.g. --role-provider owner=claude)',
      (role) => 'quest new: --role-provider names role ' + JSON.stringify(role) + ' twice');
  }
  if ($('nq-teams').checked) req.teams = true;
  else if ('max_revisions' in req || 'accept_mode' in req) throw new Error('--max-revisions and --accept-mode need --teams');
  return req;
}

$('new-quest-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const out = $('nq-result');
  out.className = 'hint';
  out.textContent = 'Creating…';
  try {
    const req = newQuest();
    const q = await call('POST', '/api/quests', req);
    out.textContent = 'Created quest ' + q.id + ' (' + q.mode + ', provider ' + q.provider + ').';
    out.dataset.created = q.id;
    $('new-quest-form').reset();
    filled = new Map();
  } catch (e) {
    out.className = 'error';
    out.textContent = e.message;
  }
});

// The form is for a logged-in session only; the page shows it then.
function showForm() { $('new-quest').hidden = !loggedIn(); loadPresets(); loadChoices(); }
document.addEventListener('questbox:session', showForm);

// ---- seed and export, on each quest's card ----

// The card is redrawn at every event of its quest: its seed box is kept
// (and moved into the new card), so what is typed in it stays.
const seeds = new Map(); // quest id -> the seed box
window.questboxQuestActions = (q) => {
  if (!loggedIn()) return null;
  if (!seeds.has(q.id)) seeds.set(q.id, seedBox(q));
  return seeds.get(q.id);
};

function seedBox(q) {
  const text = h('textarea', {rows: 2, 'aria-label': 'Hypotheses for ' + q.id + ', one per line', 'data-seed': q.id,
    placeholder: 'one hypothesis per line'});
  const note = h('span', {class: 'hint', role: 'status', 'data-seed-result': q.id});
  const seed = async () => {
    const hyps = text.value.split('\n').map((x) => x.trim()).filter((x) => x);
    if (!hyps.length) { note.textContent = 'Write a hypothesis first.'; return; }
    const v = await act('POST', '/api/quests/' + enc(q.id) + '/scan', {hypotheses: hyps});
    if (v) { text.value = ''; note.textContent = 'Added ' + v.added.length + (v.skipped.length ? ', skipped ' + v.skipped.length + ' the quest had' : '') + '.'; }
  };
  return h('div', {class: 'seed'},
    text,
    h('button', {type: 'button', 'data-seed-button': q.id, onclick: seed}, 'Seed'),
    h('button', {type: 'button', 'data-export': q.id, onclick: () => download(q.id, note)}, 'Download export'),
    note);
}

// download fetches the quest's terminal nodes not exported yet (the export
// journal the CLI's `export` uses), hands them to the browser as a file,
// and acknowledges them: each node is in one download (a download that was
// never acknowledged is offered again; each line names its node). The
// batch's signature line follows its nodes, as in `questbox export`.
async function download(id, note) {
  const b = await act('POST', '/api/quests/' + enc(id) + '/export', {});
  if (!b) return;
  if (!b.lines.length) { note.textContent = 'Nothing new to export.'; return; }
  const url = URL.createObjectURL(new Blob(b.seal ? b.lines.concat([b.seal]) : b.lines, {type: 'application/x-ndjson'}));
  const a = h('a', {href: url, download: 'questbox-' + id + '.jsonl', hidden: true});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  if (await act('POST', '/api/quests/' + enc(id) + '/export/ack', {token: b.token}) !== undefined) {
    note.textContent = 'Exported ' + b.lines.length + ' node' + (b.lines.length === 1 ? '' : 's') + '.';
  }
}

// ---- a node's runs, a run's log ----

const size = (n) => n < 1000 ? n + ' B' : n < 1e6 ? (n / 1e3).toFixed(1) + ' kB' : (n / 1e6).toFixed(1) + ' MB';

function exitText(r) {
  if (r.running) return 'running';
  return (r.exit || '–') + (r.exit_code ? ' (exit ' + r.exit_code + ')' : '');
}

window.questboxRuns = (n) => {
  if (!n.runs.length) return null;
  const body = h('div', {'data-runs': n.id}, h('p', {class: 'muted'}, 'Loading the runs…'));
  // A Team stage's run passes the gate on its answer's form; what the
  // stage decided (an accepter's accept or reject) is the node's verdict.
  const decision = n.stage && n.verdict ? h('p', {'data-decision': n.verdict}, 'Decision: ', h('strong', null, n.verdict),
    ' (the gate column says whether the answer was well formed, not what it decided)') : null;
  call('GET', '/api/runs?node=' + enc(n.id)).then((runs) => fill(body, decision,
    h('table', {class: 'runs'},
      h('thead', null, h('tr', null, ['Run', 'Ended', n.stage ? 'Gate' : 'Outcome', 'Tokens', 'Out', ''].map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', null, runs.map((r) => h('tr', {'data-run': r.id},
        h('td', null, h('code', null, r.name), h('div', {class: 'hint'}, r.provider + ' · ', when(r.started))),
        h('td', null, exitText(r)), h('td', null, r.outcome || ''), h('td', null, String(r.tokens)), h('td', null, size(r.bytes_out)),
        h('td', null, r.log ? h('button', {type: 'button', 'data-open-log': r.id, onclick: () => openLog(r)}, r.running ? 'Live log' : 'Log') :
          h('span', {class: 'hint'}, 'log dropped'))))))),
  (e) => fill(body, h('p', {class: 'error'}, e.message)));
  return [h('h3', null, 'Runs'), body];
};

let reading = null; // the AbortController of the log being shown
async function openLog(r) {
  if (reading) reading.abort();
  const ctl = new AbortController();
  reading = ctl;
  const dlg = $('log');
  $('log-h').textContent = r.name + (r.running ? ' (live)' : '');
  const pre = h('pre', {class: 'log', 'data-log': r.id});
  const status = h('p', {class: 'hint', role: 'status'}, 'Loading…');
  fill($('log-body'), status, pre);
  if (!dlg.open) dlg.showModal();
  try {
    const res = await fetch('/api/runs/' + enc(r.id) + '/log' + (r.running ? '?follow=1' : ''), {credentials: 'same-origin', signal: ctl.signal});
    if (!res.ok) {
      const v = await res.json().catch(() => ({}));
      throw new Error((v.error && v.error.message) || res.status + ' ' + res.statusText);
    }
    status.textContent = r.running ? 'Following the run…' : '';
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    for (;;) {
      const {done, value} = await reader.read();
      if (done) break;
      pre.append(dec.decode(value, {stream: true}));
    }
    pre.append(dec.decode());
    status.textContent = r.running ? 'The run ended.' : '';
    pre.dataset.done = 'true';
  } catch (e) {
    if (e.name !== 'AbortError') { status.className = 'error'; status.textContent = e.message; }
  }
}
$('log').addEventListener('close', () => { if (reading) reading.abort(); reading = null; });
})();
