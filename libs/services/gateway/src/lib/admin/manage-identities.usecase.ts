import { randomBytes, randomUUID } from 'node:crypto';
import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { Identities, type UrlProfileColumn } from '../authenticate/identities.repository';
import { hashCredential } from '../authenticate/credential-hash';
import { IdentityCache } from '../authenticate/identity-cache.service';
import { GATEWAY } from '../gateway.constants';
import { type McpUrlProfileDto } from './admin.dto';

/** Owners, their agents, agents' credentials, and MCP URLs. */
@Injectable()
export class ManageIdentitiesUseCase {
  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    private readonly identityCache: IdentityCache,
  ) {}

  async createOwner(name: string): Promise<{ ownerId: string }> {
    const ownerId = randomUUID();
    await Identities.insertOwner(this.dataSource, ownerId, name);
    return { ownerId };
  }

  async createAgent(ownerId: string, name: string): Promise<{ agentId: string }> {
    const agentId = randomUUID();
    if (!(await Identities.insertAgent(this.dataSource, agentId, ownerId, name))) throw new NotFoundException({ code: 'OWNER_NOT_FOUND', message: 'No such owner.' });
    return { agentId };
  }

  /** A new credential (shown once, stored hashed); `db` lets a caller issue it inside its own transaction. */
  async issueCredential(agentId: string, db?: Pick<DataSource, 'query'>, slug?: string): Promise<{ credentialId: string; credential: string }> {
    const credentialId = randomUUID();
    const credential = `tg_${randomBytes(32).toString('base64url')}`;
    if (!(await Identities.insertCredential(db ?? this.dataSource, credentialId, agentId, hashCredential(credential), slug))) throw new NotFoundException({ code: 'AGENT_NOT_FOUND', message: 'No such agent.' });
    return { credentialId, credential };
  }

  async revokeCredential(credentialId: string): Promise<{ credentialId: string; revokedAt: string }> {
    const revokedAt = await Identities.revokeCredential(this.dataSource, credentialId);
    if (!revokedAt) throw new NotFoundException({ code: 'CREDENTIAL_NOT_FOUND', message: 'No such credential.' });
    await this.identityChanged();
    return { credentialId, revokedAt: revokedAt.toISOString() };
  }

  /** A URL private to `ownerId`, or shared when no owner is given. */
  async createMcpUrl(slug: string, ownerId?: string, profile: McpUrlProfileDto = {}): Promise<{ mcpUrlId: string; path: string }> {
    const mcpUrlId = randomUUID();
    try {
      await Identities.insertUrl(this.dataSource, mcpUrlId, slug, ownerId ?? null);
    } catch (e) {
      if ((e as { code?: string }).code === '23505') throw new ConflictException({ code: 'SLUG_TAKEN', message: `The URL /mcp/${slug} exists already.` });
      if ((e as { code?: string }).code === '23503') throw new NotFoundException({ code: 'OWNER_NOT_FOUND', message: 'No such owner.' });
      throw e;
    }
    await this.updateMcpUrl(slug, profile);
    return { mcpUrlId, path: `/mcp/${slug}` };
  }

  async disableMcpUrl(slug: string): Promise<{ slug: string; disabledAt: string }> {
    const disabledAt = await Identities.disableUrl(this.dataSource, slug);
    if (!disabledAt) throw new NotFoundException({ code: 'MCP_URL_NOT_FOUND', message: 'No MCP server at this URL' });
    await this.identityChanged();
    return { slug, disabledAt: disabledAt.toISOString() };
  }

  async updateMcpUrl(slug: string, p: McpUrlProfileDto): Promise<{ slug: string }> {
    const columns: Partial<Record<UrlProfileColumn, unknown>> = {};
    if (p.discoveryMode !== undefined) columns.discovery_mode = p.discoveryMode;
    if (p.autoThreshold !== undefined) columns.auto_threshold = p.autoThreshold;
    if (p.pinnedTools !== undefined) columns.pinned_tools = JSON.stringify(p.pinnedTools);
    if (p.scopeTools !== undefined) columns.scope_tools = p.scopeTools === null ? null : JSON.stringify(p.scopeTools);
    if (p.scopeCategories !== undefined) columns.scope_categories = p.scopeCategories === null ? null : JSON.stringify(p.scopeCategories.map((c) => c.toLowerCase()));
    if (p.providerRules !== undefined) columns.provider_rules = p.providerRules === null ? null : JSON.stringify(p.providerRules);
    if (Object.keys(columns).length === 0) return { slug };
    const found = await Identities.updateUrlProfile(this.dataSource, slug, columns);
    await this.identityChanged();
    if (!found) throw new NotFoundException({ code: 'MCP_URL_NOT_FOUND', message: 'No MCP server at this URL' });
    return { slug };
  }

  /** Every gateway replica drops its cached URLs and credentials (this one at once, the others on the NOTIFY). */
  private identityChanged(): Promise<void> {
    return this.identityCache.changed(this.dataSource);
  }
}
