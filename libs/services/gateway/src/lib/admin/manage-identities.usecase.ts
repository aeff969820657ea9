import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { GATEWAY } from '../gateway.constants';

export function hashCredential(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Owners, their agents, agents' credentials, and MCP URLs. */
@Injectable()
export class ManageIdentitiesUseCase {
  constructor(@InjectDataSource(GATEWAY) private readonly dataSource: DataSource) {}

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
  async issueCredential(agentId: string): Promise<{ credentialId: string; credential: string }> {
    const credentialId = randomUUID();
    const credential = `tg_${randomBytes(32).toString('base64url')}`;
    const rows: unknown[] = await this.dataSource.query(
      'INSERT INTO gateway.credential (credential_id, agent_id, secret_hash) SELECT $1, agent_id, $3 FROM gateway.agent WHERE agent_id = $2 RETURNING credential_id',
      [credentialId, agentId, hashCredential(credential)],
    );
    if (rows.length === 0) throw new NotFoundException({ code: 'AGENT_NOT_FOUND', message: 'No such agent.' });
    return { credentialId, credential };
  }

  /** A URL private to `ownerId`, or shared when no owner is given. */
  async createMcpUrl(slug: string, ownerId?: string): Promise<{ mcpUrlId: string; path: string }> {
    const mcpUrlId = randomUUID();
    await this.dataSource.query('INSERT INTO gateway.mcp_url (mcp_url_id, slug, owner_id) VALUES ($1, $2, $3)', [mcpUrlId, slug, ownerId ?? null]);
    return { mcpUrlId, path: `/mcp/${slug}` };
  }
}
