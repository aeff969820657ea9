import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { hashCredential } from '../admin/manage-identities.usecase';
import { GATEWAY } from '../gateway.constants';

/** Who is calling, derived only from the credential and the URL (C2). */
export interface CallerIdentity {
  ownerId: string;
  agentId: string;
  credentialId: string;
  mcpUrlId: string;
  slug: string;
}

export type AuthOutcome = { ok: true; identity: CallerIdentity } | { ok: false; code: 'MCP_URL_NOT_FOUND' | 'MCP_CREDENTIAL_INVALID' };

@Injectable()
export class AuthenticateUseCase {
  constructor(@InjectDataSource(GATEWAY) private readonly dataSource: DataSource) {}

  async execute(slug: string, authorization: string | undefined): Promise<AuthOutcome> {
    const [url]: { mcp_url_id: string; owner_id: string | null }[] = await this.dataSource.query(
      'SELECT mcp_url_id, owner_id FROM gateway.mcp_url WHERE slug = $1 AND disabled_at IS NULL',
      [slug],
    );
    if (!url) return { ok: false, code: 'MCP_URL_NOT_FOUND' };
    const secret = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
    if (!secret) return { ok: false, code: 'MCP_CREDENTIAL_INVALID' };
    const [cred]: { credential_id: string; agent_id: string; owner_id: string }[] = await this.dataSource.query(
      `SELECT c.credential_id, c.agent_id, a.owner_id FROM gateway.credential c JOIN gateway.agent a ON a.agent_id = c.agent_id
        WHERE c.secret_hash = $1 AND c.revoked_at IS NULL`,
      [hashCredential(secret)],
    );
    if (!cred) return { ok: false, code: 'MCP_CREDENTIAL_INVALID' };
    // A private URL exists only for its owner's agents: to anyone else it is not there.
    if (url.owner_id && url.owner_id !== cred.owner_id) return { ok: false, code: 'MCP_URL_NOT_FOUND' };
    return { ok: true, identity: { ownerId: cred.owner_id, agentId: cred.agent_id, credentialId: cred.credential_id, mcpUrlId: url.mcp_url_id, slug } };
  }
}
