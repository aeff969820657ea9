import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type UrlProfile } from '../catalog/catalog-access';
import { GATEWAY } from '../gateway.constants';

/** `gateway.mcp_url`: one row per MCP URL an agent connects to, with the profile it serves. */
export interface McpUrlRow {
  mcp_url_id: string; slug: string; owner_id: string | null; discovery_mode: UrlProfile['mode']; auto_threshold: number;
  pinned_tools: string[]; scope_tools: string[] | null; scope_categories: string[] | null; provider_rules: UrlProfile['providerRules'];
}

/** A live credential (`gateway.credential`) with its agent's owner (`gateway.agent`). */
export interface CredentialRow { credential_id: string; agent_id: string; owner_id: string }

/** The reads that authenticate every MCP request (C2): the URL by its slug, the credential by its secret's hash. */
@Injectable()
export class IdentitiesRepository {
  constructor(@InjectDataSource(GATEWAY) private readonly dataSource: DataSource) {}

  /** An enabled URL by its (lower-case) slug. */
  async enabledUrl(slug: string): Promise<McpUrlRow | undefined> {
    const rows = (await this.dataSource.query('SELECT * FROM gateway.mcp_url WHERE slug = $1 AND disabled_at IS NULL', [slug])) as McpUrlRow[];
    return rows[0];
  }

  /** Whether the owner exists. */
  async ownerExists(ownerId: string): Promise<boolean> {
    return ((await this.dataSource.query('SELECT 1 FROM gateway.owner WHERE owner_id = $1', [ownerId])) as unknown[]).length > 0;
  }

  /** The id of the URL with this slug, enabled or not. */
  async urlIdOf(slug: string): Promise<string | undefined> {
    const rows = (await this.dataSource.query('SELECT mcp_url_id FROM gateway.mcp_url WHERE slug = $1', [slug])) as Pick<McpUrlRow, 'mcp_url_id'>[];
    return rows[0]?.mcp_url_id;
  }

  /** The credential whose secret hashes to `hash`, unless revoked. */
  async liveCredential(hash: string): Promise<CredentialRow | undefined> {
    const rows = (await this.dataSource.query(
      `SELECT c.credential_id, c.agent_id, a.owner_id FROM gateway.credential c JOIN gateway.agent a ON a.agent_id = c.agent_id
        WHERE c.secret_hash = $1 AND c.revoked_at IS NULL`, [hash])) as CredentialRow[];
    return rows[0];
  }
}
