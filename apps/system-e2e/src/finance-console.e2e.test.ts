/// <reference lib="dom" />
/**
 * In a real browser: Debian's Chromium, headless, driven by playwright-core (no browser download),
 * against the running embedded system's console at /console. A finance user signs in with a finance token, sees the
 * overview's charts and figures, filters the journal, opens a call by intentId and by operation key and sees its
 * timeline, downloads a statement and the journal as CSV and checks their rows, and runs the reconciliation report.
 * Screenshots of every page are saved under apps/system-e2e/screenshots/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Browser, chromium, type Page } from 'playwright-core';
import { waitFor } from '@tollgate/testing';
import { callThrough, type EmbeddedSystem, errorOf, payingAgentOnEmbedded, postJson, receiptOf, startEmbeddedSystem } from './agent-client';

jest.setTimeout(240_000);

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '../screenshots');

describe('finance console in headless Chromium', () => {
  let system: EmbeddedSystem;
  let browser: Browser;
  let page: Page;
  let agent: Client;
  let ownerId: string;
  let intentId: string;
  let financeToken: string;
  let operatorToken: string;

  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  async function signIn(token: string) {
    await page.goto(`${system.base}/console`);
    await page.fill('#token', token);
    await page.click('#sign-in-form button[type=submit]');
    await page.waitForSelector('#overview:not([hidden])');
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    system = await startEmbeddedSystem('console', { SETTLEMENT_VERIFICATION_WINDOW_MS: '200' });
    const { base, adminToken: admin } = system;
    ({ ownerId, agent } = await payingAgentOnEmbedded(system, { slug: 'console', priceMinor: '250', depositMinor: '10000' }));
    financeToken = (await postJson(`${base}/admin/finance-tokens`, { label: 'finance' }, admin)).json['token'] as string;
    operatorToken = (await postJson(`${base}/admin/finance-tokens`, { label: 'ops', role: 'operator' }, admin)).json['token'] as string;
    for (let i = 0; i < 3; i++) {
      const paid = (await callThrough(agent, 'reverse_text', { text: `console ${i}` }, `console-key-${i}`)) as CallToolResult;
      expect(errorOf(paid)).toBeUndefined();
      intentId = receiptOf(paid)!.intentId;
    }
    await waitFor('the calls settled', async () => {
      const r = await fetch(`${base}/journal?kind=settle`, { headers: { authorization: `Bearer ${financeToken}` } });
      return new Set(((await r.json()) as { entries: { postingId: string }[] }).entries.map((e) => e.postingId)).size === 3;
    }, 60_000, 300);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    page = await (await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } })).newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await agent?.close();
    await system?.stop();
  });

  it('refuses a wrong token, then signs in and shows the overview with charts and figures', async () => {
    await page.goto(`${system.base}/console`);
    await page.fill('#token', 'not-a-token');
    await page.click('#sign-in-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#sign-in-error')?.textContent?.includes('FINANCE_TOKEN_INVALID'));
    await signIn(financeToken);
    await page.waitForSelector('[data-metric="Paid calls"] b');
    expect(await page.textContent('[data-metric="Paid calls"] b')).toBe('3');
    // Amounts in the asset's decimals, with the asset (USDC: 6 decimals; 750 minor units = 0.00075).
    expect(await page.textContent('[data-metric="Volume"] b')).toBe('0.00075 USDC');
    expect(await page.textContent('[data-metric="Fees (revenue)"] b')).toBe('0.000075 USDC');
    expect(await page.textContent('[data-metric="Provider payables"] b')).toBe('0.000675 USDC');
    // Chart.js drew both charts (a canvas with pixels on it).
    const drawn = await page.evaluate(() => ['chart-calls', 'chart-money'].map((id) => {
      const c = document.getElementById(id) as HTMLCanvasElement;
      return c.width > 0 && c.toDataURL().length > 2000;
    }));
    expect(drawn).toEqual([true, true]);
    await shot('overview');
  });

  it('filters the journal and downloads it as CSV', async () => {
    await page.click('nav a[href="#journal"]');
    await page.fill('#journal-form [name=ownerId]', ownerId);
    await page.selectOption('#journal-form [name=kind]', 'capture');
    // By tool too (the calls were reverse_text).
    await page.fill('#journal-form [name=tool]', 'reverse_text');
    await page.click('#journal-form button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#journal-table tbody tr').length > 0);
    const kinds = await page.$$eval('#journal-table tbody tr td:nth-child(3)', (tds) => tds.map((td) => td.textContent));
    expect(kinds.length).toBeGreaterThanOrEqual(3);
    expect(new Set(kinds)).toEqual(new Set(['capture']));
    // The amount as a person reads it (USDC, 6 decimals) beside the minor units.
    const amounts = await page.$$eval('#journal-table tbody tr', (trs) => trs.map((tr) => [tr.children[7]?.textContent, tr.children[8]?.textContent]));
    expect(amounts.every(([shown, minor]) => Math.round(Number(shown) * 1e6) === Number(minor) && shown !== minor)).toBe(true);
    await shot('journal');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#journal-csv')]);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split(/\r?\n/);
    expect(csv[0]).toMatch(/posting_id.*,amount_minor,amount,rail,charge_minor,unit,units,unit_price_minor$/);
    expect(csv.length - 1).toBe(kinds.length);
    expect(csv.slice(1).every((line) => line.includes(',capture,'))).toBe(true);
  });

  it('opens a call by intentId, with its timeline and postings', async () => {
    await page.click('nav a[href="#call"]');
    await page.fill('#call-form [name=id]', intentId);
    await page.click('#call-form button[type=submit]');
    await page.waitForSelector('#call-timeline li');
    expect(await page.textContent('#call-status')).toBe('settled');
    const types = await page.$$eval('#call-timeline li', (lis) => lis.map((li) => li.getAttribute('data-type')));
    expect(types).toEqual(expect.arrayContaining(['CallRequested', 'PaymentHeld', 'CallDispatched', 'ResultReceived', 'CallSettled']));
    await shot('call');
  });

  it('downloads an owner statement as CSV whose rows match the statement on the page', async () => {
    await page.click('nav a[href="#statements"]');
    const today = new Date();
    const day = (d: Date) => d.toISOString().slice(0, 10);
    await page.fill('#statement-form [name=id]', ownerId);
    await page.fill('#statement-form [name=from]', day(new Date(today.getTime() - 86_400_000)));
    await page.fill('#statement-form [name=to]', day(new Date(today.getTime() + 86_400_000)));
    await page.click('#statement-form button[type=submit]');
    await page.waitForSelector('#statement-view table');
    const closing = await page.$$eval('#statement-view table:first-of-type tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent)));
    const available = closing.find((r) => r[0] === `owner:${ownerId}:available`);
    expect(available?.[4]).toBe('0.00925');
    expect(available?.[5]).toBe(String(10_000 - 3 * 250));
    await shot('statement');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#statement-csv')]);
    const rows = readFileSync((await download.path())!, 'utf8').trim().split(/\r?\n/);
    expect(rows[0]).toMatch(/^row,occurred_at/);
    const closingRow = rows.find((r) => r.startsWith('closing,') && r.includes(`owner:${ownerId}:available`));
    // amount_minor and amount, then the five call columns (empty on a balance row).
    expect(closingRow?.split(',').slice(-7)).toEqual([String(10_000 - 3 * 250), '0.00925', '', '', '', '', '']);
    expect(rows.filter((r) => r.startsWith('line,')).length).toBeGreaterThanOrEqual(1 + 3 * 2);
  });

  it('runs the reconciliation report; an operator finds a call by its operation key', async () => {
    await page.click('nav a[href="#reconciliation"]');
    await page.click('#reconciliation-form button[type=submit]');
    await page.waitForSelector('#reconciliation-summary');
    expect(await page.textContent('#reconciliation-summary')).toMatch(/accounts compared, 0 mismatched; 0 calls not terminal; 0 unknown outcomes open; 0 parked events/);
    await shot('reconciliation');
    await page.click('#sign-out');
    await signIn(operatorToken);
    await page.goto(`${system.base}/console#call/console-key-1`);
    await page.waitForSelector('#call-timeline li');
    expect(await page.textContent('#call-view h3')).toMatch(/^Call [0-9a-f-]{36}$/);
    await shot('call-by-operation-key');
  });
});
