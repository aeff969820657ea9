import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { returnedRows } from '@tollgate/persistence';
import { IdentityCache } from '../authenticate/identity-cache.service';
import { GATEWAY } from '../gateway.constants';
import { type McpUrlProfileDto } from './admin.dto';

export function hashCredential(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Owners, their agents, agents' credentials, and MCP URLs. */
@Injectable()
export class ManageIdentitiesUseCase {
  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    private readonly identityCache: IdentityCache,
  ) {}

  async createOwner(name: string): Promise<{ ownerId: string }> {
    const ownerId = randomUUID();
    await this.dataSource.query('INSERT INTO gateway.owner (owner_id, name) VALUES ($1, $2)', [ownerId, name]);
    return { ownerId };
  }

  async createAgent(ownerId: string, name: string): Promise<{ agentId: string }> {
    const agentId = randomUUID();
    const rows: unknown[] = await this.dataSource.query(
      'INSERT INTO gateway.agent (agent_id, owner_id, name) SELECT $1, owner_id, $3 FROM gateway.owner WHERE owner_id = $2 RETURNING agent_id',
      [agentId, ownerId, name],
    );
    if (rows.length === 0) throw new NotFoundException({ code: 'OWNER_NOT_FOUND', message: 'No such owner.' });
    return { agentId };
  }

  /** The secret is returned once and never stored: only its hash is. */
  /** A new credential (shown once, stored hashed); `db` lets a caller issue it inside its own transaction. */
  async issueCredential(agentId: string, db: Pick<DataSource, 'query'> = this.dataSource): Promise<{ credentialId: string; credential: string }> {
    const credentialId = randomUUID();
    const credential = `tg_${randomBytes(32).toString('base64url')}`;
    const rows: unknown[] = await db.query(
      'INSERT INTO gateway.credential (credential_id, agent_id, secret_hash) SELECT $1, agent_id, $3 FROM gateway.agent WHERE agent_id = $2 RETURNING credential_id',
      [credentialId, agentId, hashCredential(credential)],
    );
    if (rows.length === 0) throw new NotFoundException({ code: 'AGENT_NOT_FOUND', message: 'No such agent.' });
    return { credentialId, credential };
  }

  async revokeCredential(credentialId: string): Promise<{ credentialId: string; revokedAt: string }> {
    const rows = returnedRows<{ revoked_at: Date }>(await this.dataSource.query(
      'UPDATE gateway.credential SET revoked_at = COALESCE(revoked_at, now()) WHERE credential_id = $1 RETURNING revoked_at',
      [credentialId],
    ));
    if (rows.length === 0) throw new NotFoundException({ code: 'CREDENTIAL_NOT_FOUND', message: 'No such credential.' });
    await this.identityChanged();
    return { credentialId, revokedAt: rows[0]!.revoked_at.toISOString() };
  }

  /** A URL private to `ownerId`, or shared when no owner is given. */
  async createMcpUrl(slug: string, ownerId?: string, profile: McpUrlProfileDto = {}): Promise<{ mcpUrlId: string; path: string }> {
    const mcpUrlId = randomUUID();
    try {
      await this.dataSource.query('INSERT INTO gateway.mcp_url (mcp_url_id, slug, owner_id) VALUES ($1, $2, $3)', [mcpUrlId, slug, ownerId ?? null]);
    } catch (e) {
      if ((e as { code?: string }).code === '23505') throw new ConflictException({ code: 'SLUG_TAKEN', message: `The URL /mcp/${slug} exists already.` });
      if ((e as { code?: string }).code === '23503') throw new NotFoundException({ code: 'OWNER_NOT_FOUND', message: 'No such owner.' });
      throw e;
    }
    await this.updateMcpUrl(slug, profile);
    return { mcpUrlId, path: `/mcp/${slug}` };
  }

  async disableMcpUrl(slug: string): Promise<{ slug: string; disabledAt: string }> {
    const rows = returnedRows<{ disabled_at: Date }>(await this.dataSource.query(
      'UPDATE gateway.mcp_url SET disabled_at = COALESCE(disabled_at, now()) WHERE slug = $1 RETURNING disabled_at',
      [slug],
    ));
    if (rows.length === 0) throw new NotFoundException({ code: 'MCP_URL_NOT_FOUND', message: 'No MCP server at this URL' });
    await this.identityChanged();
    return { slug, disabledAt: rows[0]!.disabled_at.toISOString() };
  }

  async updateMcpUrl(slug: string, p: McpUrlProfileDto): Promise<{ slug: string }> {
    const sets: string[] = [];
    const values: unknown[] = [slug];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (p.discoveryMode !== undefined) set('discovery_mode', p.discoveryMode);
    if (p.autoThreshold !== undefined) set('auto_threshold', p.autoThreshold);
    if (p.pinnedTools !== undefined) set('pinned_tools', JSON.stringify(p.pinnedTools));
    if (p.scopeTools !== undefined) set('scope_tools', p.scopeTools === null ? null : JSON.stringify(p.scopeTools));
    if (p.scopeCategories !== undefined) set('scope_categories', p.scopeCategories === null ? null : JSON.stringify(p.scopeCategories.map((c) => c.toLowerCase())));
    if (p.providerRules !== undefined) set('provider_rules', p.providerRules === null ? null : JSON.stringify(p.providerRules));
    if (sets.length === 0) return { slug };
    const rows = returnedRows(await this.dataSource.query(`UPDATE gateway.mcp_url SET ${sets.join(', ')} WHERE slug = $1 RETURNING slug`, values));
    await this.identityChanged();
    if (rows.length === 0) throw new NotFoundException({ code: 'MCP_URL_NOT_FOUND', message: 'No MCP server at this URL' });
    return { slug };
  }

  /** Every gateway replica drops its cached URLs and credentials (this one at once, the others on the NOTIFY). */
  private identityChanged(): Promise<void> {
    return this.identityCache.changed(this.dataSource);
  }
}
