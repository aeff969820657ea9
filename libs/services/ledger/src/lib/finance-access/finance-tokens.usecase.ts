import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { LEDGER, LEDGER_OPTIONS } from '../ledger.constants';
import { type LedgerOptions } from '../ledger.options';
import { AccessTokens } from './access-tokens.repository';
import { type FinanceCaller } from './finance-caller';

export interface IssuedToken { tokenId: string; token: string; role: 'finance' | 'operator'; ownerId: string | null; label: string }

const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');
/** Finance tokens are recognisable in logs and secret scanners, like other platforms' API keys. */
const PREFIX = 'tgf_';

/** Finance and operator tokens: issued by an admin, shown once, stored as a hash, revocable. */
@Injectable()
export class FinanceTokensUseCase {
  private readonly adminToken: Buffer | undefined;

  constructor(
    @InjectDataSource(LEDGER) private readonly dataSource: DataSource,
    @Inject(LEDGER_OPTIONS) options: LedgerOptions,
  ) {
    this.adminToken = options.adminToken ? Buffer.from(options.adminToken) : undefined;
  }

  async issue(role: 'finance' | 'operator', ownerId: string | null, label: string): Promise<IssuedToken> {
    const tokenId = randomUUID();
    const token = PREFIX + randomBytes(24).toString('base64url');
    await AccessTokens.insert(this.dataSource, { token_id: tokenId, secret_hash: hash(token), role, owner_id: role === 'finance' ? ownerId : null, label });
    return { tokenId, token, role, ownerId: role === 'finance' ? ownerId : null, label };
  }

  revoke(tokenId: string): Promise<boolean> {
    return AccessTokens.revoke(this.dataSource, tokenId);
  }

  async list(): Promise<{ tokenId: string; role: string; ownerId: string | null; label: string; createdAt: string; revokedAt: string | null }[]> {
    const rows = await AccessTokens.all(this.dataSource);
    return rows.map((r) => ({ tokenId: r.token_id, role: r.role, ownerId: r.owner_id, label: r.label, createdAt: r.created_at.toISOString(), revokedAt: r.revoked_at?.toISOString() ?? null }));
  }

  /** The caller a presented secret stands for; undefined for anything else (agent credentials included). */
  async authenticate(secret: string): Promise<FinanceCaller | undefined> {
    if (this.isAdminToken(secret)) return { role: 'operator', tokenId: null };
    if (!secret.startsWith(PREFIX)) return undefined;
    const row = await AccessTokens.live(this.dataSource, hash(secret));
    if (!row) return undefined;
    return row.role === 'operator' ? { role: 'operator', tokenId: row.token_id } : { role: 'finance', tokenId: row.token_id, ownerId: row.owner_id };
  }

  private isAdminToken(secret: string): boolean {
    const given = Buffer.from(secret);
    return !!this.adminToken && given.length === this.adminToken.length && timingSafeEqual(given, this.adminToken);
  }
}
