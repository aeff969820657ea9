import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type SignInPoll, type SignInStarted } from '@tollgate/contracts';
import { returnedRows } from '@tollgate/persistence';
import { hashCredential, ManageIdentitiesUseCase } from '../admin/manage-identities.usecase';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';

export type PollOutcome = SignInPoll;

export type ApproveOutcome = { ok: true; agentId: string; deviceName: string } | { ok: false; reason: 'owner_key_invalid' | 'expired' | 'not_pending' | 'unknown' | 'url_not_found' };

const CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ23456789';

/**
 * The device flow of the local bridge (G2), in the spirit of OAuth's device
 * authorization grant: the device starts a request and polls with a secret
 * only it holds; the owner opens the approval page and approves with an owner
 * key; approval mints a credential for a new agent of that owner, handed to
 * the device once.
 */
@Injectable()
export class DeviceSignInUseCase {
  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
    private readonly identities: ManageIdentitiesUseCase,
  ) {}

  async start(deviceName: string, slug: string, publicBase: string): Promise<SignInStarted | undefined> {
    const [url] = await this.dataSource.query('SELECT 1 FROM gateway.mcp_url WHERE slug = $1 AND disabled_at IS NULL', [slug]);
    if (!url) return undefined;
    const requestId = randomUUID();
    const pollToken = randomBytes(32).toString('base64url');
    const code = Array.from({ length: 8 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
    const userCode = `${code.slice(0, 4)}-${code.slice(4)}`;
    const expiresAt = new Date(Date.now() + this.options.signInTtlMs);
    await this.dataSource.query(
      'INSERT INTO gateway.device_sign_in (request_id, poll_hash, user_code, device_name, slug, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [requestId, hashCredential(pollToken), userCode, deviceName, slug, expiresAt],
    );
    return { requestId, pollToken, userCode, approvalUrl: `${publicBase}/signin/approve/${requestId}`, expiresAt: expiresAt.toISOString(), intervalMs: 1000 };
  }

  async describe(requestId: string): Promise<{ userCode: string; deviceName: string; slug: string; status: string; expired: boolean } | undefined> {
    const [r]: { user_code: string; device_name: string; slug: string; status: string; expired: boolean }[] = await this.dataSource.query(
      'SELECT user_code, device_name, slug, status, expires_at < now() AS expired FROM gateway.device_sign_in WHERE request_id = $1',
      [requestId],
    );
    return r && { userCode: r.user_code, deviceName: r.device_name, slug: r.slug, status: r.status, expired: r.expired };
  }

  async approve(requestId: string, ownerKey: string): Promise<ApproveOutcome> {
    const [owner]: { owner_id: string }[] = await this.dataSource.query(
      'SELECT owner_id FROM gateway.owner_key WHERE secret_hash = $1 AND revoked_at IS NULL',
      [hashCredential(ownerKey)],
    );
    if (!owner) return { ok: false, reason: 'owner_key_invalid' };
    const req = await this.describe(requestId);
    if (!req) return { ok: false, reason: 'unknown' };
    if (req.expired) return { ok: false, reason: 'expired' };
    if (req.status !== 'pending') return { ok: false, reason: 'not_pending' };
    const [url]: { owner_id: string | null }[] = await this.dataSource.query('SELECT owner_id FROM gateway.mcp_url WHERE slug = $1', [req.slug]);
    if (!url || (url.owner_id && url.owner_id !== owner.owner_id)) return { ok: false, reason: 'url_not_found' };
    const { agentId } = await this.identities.createAgent(owner.owner_id, `Device: ${req.deviceName}`.slice(0, 200));
    const { credential } = await this.identities.issueCredential(agentId);
    const rows = returnedRows(await this.dataSource.query(
      `UPDATE gateway.device_sign_in SET status = 'approved', owner_id = $2, agent_id = $3, pending_credential = $4, decided_at = now()
        WHERE request_id = $1 AND status = 'pending' AND expires_at >= now() RETURNING request_id`,
      [requestId, owner.owner_id, agentId, credential],
    ));
    if (rows.length === 0) return { ok: false, reason: 'not_pending' };
    return { ok: true, agentId, deviceName: req.deviceName };
  }

  /** The device's poll: the credential is handed over exactly once, then erased from the request. */
  async poll(requestId: string, pollToken: string): Promise<PollOutcome> {
    const rows = returnedRows<{ pending_credential: string; agent_id: string; slug: string }>(await this.dataSource.query(
      `UPDATE gateway.device_sign_in d SET status = 'collected', pending_credential = NULL
         FROM (SELECT request_id, pending_credential AS credential FROM gateway.device_sign_in WHERE request_id = $1 AND poll_hash = $2 AND status = 'approved' FOR UPDATE) prev
        WHERE d.request_id = prev.request_id RETURNING prev.credential AS pending_credential, d.agent_id, d.slug`,
      [requestId, hashCredential(pollToken)],
    ));
    if (rows[0]) return { status: 'approved', credential: rows[0].pending_credential, agentId: rows[0].agent_id, mcpPath: `/mcp/${rows[0].slug}` };
    const [r]: { status: string; expired: boolean; expires_at: Date }[] = await this.dataSource.query(
      'SELECT status, expires_at < now() AS expired, expires_at FROM gateway.device_sign_in WHERE request_id = $1 AND poll_hash = $2',
      [requestId, hashCredential(pollToken)],
    );
    if (!r) return { status: 'unknown' };
    if (r.status === 'collected') return { status: 'collected' };
    if (r.expired) return { status: 'expired' };
    return { status: 'pending', expiresAt: r.expires_at.toISOString() };
  }

  async issueOwnerKey(ownerId: string): Promise<{ keyId: string; ownerKey: string } | undefined> {
    const keyId = randomUUID();
    const ownerKey = `tgo_${randomBytes(32).toString('base64url')}`;
    const rows = returnedRows(await this.dataSource.query(
      'INSERT INTO gateway.owner_key (key_id, owner_id, secret_hash) SELECT $1, owner_id, $3 FROM gateway.owner WHERE owner_id = $2 RETURNING key_id',
      [keyId, ownerId, hashCredential(ownerKey)],
    ));
    return rows.length > 0 ? { keyId, ownerKey } : undefined;
  }
}
