/* Tollgate finance console: a small single-page app over the ledger's finance API. Everything shown from the API is
   set with textContent (never as markup); the token lives in sessionStorage for this tab only. */
(() => {
  'use strict';
  const $ = (sel, root = document) => root.querySelector(sel);
  const TOKEN_KEY = 'tollgate.financeToken';
  const token = () => sessionStorage.getItem(TOKEN_KEY);
  const SECTIONS = ['overview', 'journal', 'call', 'statements', 'reconciliation'];
  const charts = {};

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === 'class') node.className = v; else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(c == null ? '' : String(c)));
    return node;
  }

  /** Minor units in an asset's decimals ("250000", 6 → "0.25"); exact, from the integer string (never a float). */
  function decimal(minor, decimals) {
    const negative = String(minor).startsWith('-');
    const digits = String(minor).replace('-', '').padStart(decimals + 1, '0');
    const whole = digits.slice(0, digits.length - decimals);
    let frac = digits.slice(digits.length - decimals).replace(/0+$/, '');
    if (frac.length < 2 && decimals >= 2) frac = frac.padEnd(2, '0');
    return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
  }

  function showError(message) { $('#error').textContent = message || ''; }

  async function api(path) {
    const res = await fetch(path, { headers: { authorization: `Bearer ${token()}` } });
    const body = res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text();
    if (res.ok) return body;
    const message = body && body.message ? `${body.code}: ${body.message}` : `HTTP ${res.status}`;
    if (res.status === 401 && !$('#nav').hidden) signOut();
    throw Object.assign(new Error(message), { code: body && body.code, retryAfterMs: body && body.retryAfterMs });
  }

  /** A call the platform has but the ledger has not recorded yet: said on the page, asked again a few times. */
  async function callWhenRecorded(intentId, view) {
    for (let tries = 0; ; tries++) {
      try {
        return await api(`/calls/${encodeURIComponent(intentId)}`);
      } catch (e) {
        if (e.code !== 'CALL_NOT_YET_IN_LEDGER' || tries >= 10) throw e;
        view.replaceChildren(el('p', { id: 'call-pending' }, 'The platform has this call; the ledger records it within about a second…'));
        await new Promise((r) => setTimeout(r, e.retryAfterMs || 500));
      }
    }
  }

  async function download(path, filename) {
    const res = await fetch(path, { headers: { authorization: `Bearer ${token()}` } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const url = URL.createObjectURL(await res.blob());
    const a = el('a', { href: url, download: filename });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  const query = (form) => {
    const params = new URLSearchParams();
    for (const [k, v] of new FormData(form)) {
      if (v === '') continue;
      params.set(k, form.elements[k].type === 'datetime-local' ? new Date(v).toISOString() : form.elements[k].type === 'date' ? `${v}T00:00:00.000Z` : v);
    }
    return params;
  };

  function table(headers, rows) {
    return el('table', {}, el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', h.num ? { class: 'num' } : {}, h.label)))),
      el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c, i) => el('td', headers[i].num ? { class: 'num' } : {}, c))))));
  }

  // --- routing -----------------------------------------------------------------------------------------------------
  function route() {
    const signedIn = Boolean(token());
    $('#nav').hidden = !signedIn;
    $('#sign-in').hidden = signedIn;
    const [name, arg] = location.hash.slice(1).split('/');
    const current = signedIn ? (SECTIONS.includes(name) ? name : 'overview') : null;
    for (const s of SECTIONS) $(`#${s}`).hidden = s !== current;
    for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.getAttribute('href') === `#${current}`);
    showError('');
    if (current === 'overview') loadOverview().catch((e) => showError(e.message));
    if (current === 'call' && arg) { $('#call-form').elements.id.value = decodeURIComponent(arg); openCall(decodeURIComponent(arg)).catch((e) => showError(e.message)); }
  }

  function signOut() { sessionStorage.removeItem(TOKEN_KEY); location.hash = ''; route(); }

  // --- overview ----------------------------------------------------------------------------------------------------
  async function loadOverview() {
    const params = query($('#overview-form'));
    const { days } = await api(`/journal/summary?${params}`);
    const labels = [...new Set(days.map((d) => d.day))];
    // Never summed across assets: one card line and one money series per asset, in its decimals.
    const assets = [...new Set(days.map((d) => d.asset))].sort();
    const decimalsOf = Object.fromEntries(days.map((d) => [d.asset, d.decimals]));
    const sum = (k, asset) => days.filter((d) => d.asset === asset).reduce((s, d) => s + BigInt(d[k]), 0n);
    const money = (k) => assets.length === 0 ? ['0'] : assets.map((a) => `${decimal(sum(k, a), decimalsOf[a])} ${a}`);
    const cards = $('#overview-cards');
    cards.replaceChildren(...[['Paid calls', [String(days.reduce((s, d) => s + d.calls, 0))]], ['Volume', money('volume')], ['Fees (revenue)', money('fees')],
      ['Provider payables', money('providerPayables')], ['Refunds', money('refunds')]].map(([k, lines]) => el('div', { class: 'card', 'data-metric': k }, k, ...lines.map((v) => el('b', {}, v)))));
    const series = (k, asset) => labels.map((day) => days.filter((d) => d.day === day && (asset === undefined || d.asset === asset))
      .reduce((s, d) => s + (asset === undefined ? Number(d[k]) : Number(decimal(d[k], d.decimals))), 0));
    draw('chart-calls', 'bar', labels, [{ label: 'paid calls', data: series('calls') }]);
    draw('chart-money', 'line', labels, assets.flatMap((a) => ['volume', 'fees', 'providerPayables', 'refunds'].map((k) => ({ label: `${k} (${a})`, data: series(k, a) }))));
  }

  function draw(id, type, labels, datasets) {
    if (typeof Chart === 'undefined') return;
    charts[id]?.destroy();
    charts[id] = new Chart($(`#${id}`), { type, data: { labels, datasets }, options: { animation: false, responsive: true } });
  }

  // --- journal -----------------------------------------------------------------------------------------------------
  let journalCursor = null;
  async function loadJournal(append) {
    const params = query($('#journal-form'));
    params.set('limit', '50');
    if (append && journalCursor) params.set('cursor', journalCursor);
    const { entries, nextCursor } = await api(`/journal?${params}`);
    journalCursor = nextCursor;
    const body = $('#journal-table tbody');
    const rows = entries.map((e) => {
      const call = e.intentId ? el('a', { href: `#call/${e.intentId}` }, e.intentId.slice(0, 8)) : '';
      return el('tr', {}, el('td', {}, e.occurredAt), el('td', {}, e.recordedAt), el('td', {}, e.kind), el('td', {}, e.postingId), el('td', {}, call),
        el('td', {}, e.account), el('td', {}, e.asset), el('td', { class: 'num' }, e.amount), el('td', { class: 'num' }, e.amountMinor));
    });
    if (append) body.append(...rows); else body.replaceChildren(...rows);
    $('#journal-more').hidden = !nextCursor;
  }

  // --- call ----------------------------------------------------------------------------------------------------------
  async function openCall(id) {
    const view = $('#call-view');
    view.replaceChildren();
    let intentId = id.trim();
    if (!/^[0-9a-f-]{36}$/i.test(intentId)) {
      const { calls } = await api(`/calls?operationKey=${encodeURIComponent(intentId)}`);
      if (calls.length === 0) throw new Error('No call has this operation key.');
      if (calls.length > 1) {
        view.append(el('p', {}, 'Several agents used this operation key:'), el('ul', {}, ...calls.map((c) => el('li', {}, el('a', { href: `#call/${c.intentId}` }, c.intentId), ` agent ${c.agentId}`))));
        return;
      }
      intentId = calls[0].intentId;
    }
    const call = await callWhenRecorded(intentId, view);
    view.replaceChildren();
    view.append(el('h3', {}, `Call ${call.intentId}`), el('p', {}, 'Status: ', el('b', { id: 'call-status' }, call.status)));
    if (call.contradictions.length) view.append(el('p', { class: 'bad' }, `Contradictions: ${call.contradictions.join(', ')}`));
    const m = call.money;
    const amt = (a) => (a ? `${a.amountMinor} ${a.asset}` : '—');
    view.append(el('p', { id: 'call-money' }, `Rail: ${m.rail ?? '—'} · held ${amt(m.held)} · charged ${amt(m.charged)} · released ${amt(m.released)}`));
    if (m.usage) {
      view.append(el('p', { id: 'call-usage', class: m.usage.flag ? 'bad' : '' }, `Usage: ${m.usage.units ?? 'no usable report'} × ${m.usage.unit} at ${m.usage.unitPriceMinor} each`
        + `${m.usage.minimumMinor ? `, minimum ${m.usage.minimumMinor}` : ''}${m.usage.flag ? ` — flagged: ${m.usage.flag}` : ''}`));
    }
    view.append(el('ol', { class: 'timeline', id: 'call-timeline' }, ...call.timeline.map((t) => el('li', { 'data-type': t.type },
      el('b', {}, t.type), ` by ${t.producer} at ${t.occurredAt} (recorded ${t.recordedAt})`, el('pre', {}, JSON.stringify(t.details, null, 2))))));
    const { entries } = await api(`/journal?intentId=${encodeURIComponent(intentId)}`);
    view.append(el('h4', {}, 'Postings'), table([{ label: 'Kind' }, { label: 'Account' }, { label: 'Asset' }, { label: 'Amount', num: true }, { label: 'Minor units', num: true }], entries.map((e) => [e.kind, e.account, e.asset, e.amount, e.amountMinor])));
  }

  // --- statements ----------------------------------------------------------------------------------------------------
  const statementPath = (form, csv) => {
    const f = form.elements;
    const params = new URLSearchParams({ from: `${f.from.value}T00:00:00.000Z`, to: `${f.to.value}T00:00:00.000Z` });
    if (csv) params.set('format', 'csv');
    return `/statements/${f.of.value}/${encodeURIComponent(f.id.value)}?${params}`;
  };
  async function loadStatement() {
    const s = await api(statementPath($('#statement-form'), false));
    $('#statement-view').replaceChildren(
      el('h3', {}, `Statement ${s.from} – ${s.to}`),
      table([{ label: 'Account' }, { label: 'Asset' }, { label: 'Opening', num: true }, { label: 'Movements', num: true }, { label: 'Closing', num: true }, { label: 'Closing (minor units)', num: true }],
        s.accounts.map((a) => [a.account, a.asset, a.display.opening, a.display.movements, a.display.closing, a.closing])),
      el('h4', {}, `Lines${s.linesTruncated ? ' (first page; the CSV has them all)' : ''}`),
      table([{ label: 'Effective' }, { label: 'Kind' }, { label: 'Account' }, { label: 'Asset' }, { label: 'Amount', num: true }], s.lines.map((l) => [l.occurredAt, l.kind, l.account, l.asset, l.amount])));
  }

  // --- reconciliation ------------------------------------------------------------------------------------------------
  async function loadReconciliation() {
    const r = await api(`/reconciliation?${query($('#reconciliation-form'))}`);
    const summary = el('p', { id: 'reconciliation-summary', class: r.accounts.mismatches ? 'bad' : 'ok' },
      `${r.accounts.lines.length} accounts compared, ${r.accounts.mismatches} mismatched; ${r.callsNotTerminal.calls.length} calls not terminal; ${r.unknownOutcomes.open.length} unknown outcomes open; ${r.parkedEvents.length} parked events; ${r.meteredCalls.checked} metered calls checked, ${r.meteredCalls.problems.length} off the charge rule.`);
    $('#reconciliation-view').replaceChildren(summary,
      el('h3', {}, 'Books by account (payment + settlement = journal)'),
      table([{ label: 'Account' }, { label: 'Asset' }, { label: 'Payment', num: true }, { label: 'Settlement', num: true }, { label: 'Journal', num: true }, { label: 'Difference', num: true }, { label: 'Status' }],
        r.accounts.lines.map((l) => [l.account, l.asset, l.payment, l.settlement, l.journal, l.difference, l.status])),
      el('h3', {}, 'Calls not terminal'), table([{ label: 'Call' }, { label: 'Last event' }, { label: 'Started' }], r.callsNotTerminal.calls.map((c) => [el('a', { href: `#call/${c.intentId}` }, c.intentId), c.lastType, c.startedAt])),
      el('h3', {}, 'Unknown outcomes open'), table([{ label: 'Call' }, { label: 'Reason' }, { label: 'Since' }], r.unknownOutcomes.open.map((u) => [el('a', { href: `#call/${u.intentId}` }, u.intentId), u.reason, u.openedAt])),
      el('h3', {}, 'Metered calls off the charge rule'), table([{ label: 'Call' }, { label: 'Problem' }], r.meteredCalls.problems.map((p) => [el('a', { href: `#call/${p.intentId}` }, p.intentId), p.problem])),
      el('h3', {}, 'Parked events'), table([{ label: 'Service' }, { label: 'Consumer' }, { label: 'Topic' }, { label: 'Reason' }], r.parkedEvents.map((p) => [p.service, p.consumer, p.topic, p.reason])));
  }

  // --- wiring --------------------------------------------------------------------------------------------------------
  const on = (sel, event, fn) => $(sel).addEventListener(event, (e) => { e.preventDefault(); showError(''); Promise.resolve(fn(e)).catch((err) => showError(err.message)); });
  document.addEventListener('DOMContentLoaded', () => {
    on('#sign-in-form', 'submit', async () => {
      sessionStorage.setItem(TOKEN_KEY, $('#token').value.trim());
      try { await api('/journal?limit=1'); } catch (e) { sessionStorage.removeItem(TOKEN_KEY); $('#sign-in-error').textContent = e.message; return; }
      $('#token').value = '';
      $('#sign-in-error').textContent = '';
      location.hash = 'overview';
      route();
    });
    $('#sign-out').addEventListener('click', signOut);
    on('#overview-form', 'submit', loadOverview);
    on('#journal-form', 'submit', () => loadJournal(false));
    on('#journal-more', 'click', () => loadJournal(true));
    on('#journal-csv', 'click', () => download(`/journal.csv?${query($('#journal-form'))}`, 'journal.csv'));
    on('#call-form', 'submit', () => { location.hash = `call/${encodeURIComponent($('#call-form').elements.id.value.trim())}`; });
    on('#statement-form', 'submit', loadStatement);
    on('#statement-csv', 'click', () => download(statementPath($('#statement-form'), true), 'statement.csv'));
    on('#reconciliation-form', 'submit', loadReconciliation);
    window.addEventListener('hashchange', route);
    route();
  });
})();
