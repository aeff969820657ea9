import { createHmac, timingSafeEqual } from 'node:crypto';

/** The saved search a cursor carries (G3.5): it drives paging, whatever else the next request says. */
export interface SavedSearch {
  query: string;
  category: string | null;
  detail: 'names' | 'summary' | 'full';
  limit: number;
}

export interface CursorState extends SavedSearch {
  /** Index of the next result. */
  offset: number;
  /** The page this cursor opens (2..10). */
  page: number;
  /** When the first page was served (epoch ms): cursors expire 10 minutes after it. */
  firstPageAt: number;
  credentialId: string;
  mcpUrlId: string;
}

export const CURSOR_TTL_MS = 10 * 60_000;
export const MAX_PAGES = 10;

/**
 * Opaque, tamper-proof cursors: the state as base64url JSON with an HMAC, so
 * any gateway instance can continue any search without shared storage, and a
 * changed, foreign or expired cursor is recognised (INVALID_CURSOR).
 */
export class SearchCursorCodec {
  constructor(private readonly key: Buffer) {}

  encode(state: CursorState): string {
    const body = Buffer.from(JSON.stringify(state)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** The state, or undefined when the cursor is malformed, altered, expired, or belongs to another credential or URL. */
  decode(cursor: string, who: { credentialId: string; mcpUrlId: string }, now = Date.now()): CursorState | undefined {
    const [body, mac, extra] = cursor.split('.');
    if (!body || !mac || extra !== undefined) return undefined;
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    let state: CursorState;
    try {
      state = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorState;
    } catch {
      return undefined;
    }
    if (state.credentialId !== who.credentialId || state.mcpUrlId !== who.mcpUrlId) return undefined;
    if (now - state.firstPageAt > CURSOR_TTL_MS || state.page > MAX_PAGES) return undefined;
    return state;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
