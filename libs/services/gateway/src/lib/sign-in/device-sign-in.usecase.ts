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
 * key; approval creates a new agent of that owner, and the device's first poll
 * after it mints that agent's credential and hands it over once. No credential
 * ever waits in the request (issue 12): only its hash exists, in the credential
 * table. Requests expire (`signInTtlMs`); the retention job purges old ones.
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
    const rows = returnedRows(await this.dataSource.query(
      `UPDATE gateway.device_sign_in SET status = 'approved', owner_id = $2, agent_id = $3, decided_at = now()
        WHERE request_id = $1 AND status = 'pending' AND expires_at >= now() RETURNING request_id`,
      [requestId, owner.owner_id, agentId],
    ));
    if (rows.length === 0) return { ok: false, reason: 'not_pending' };
    return { ok: true, agentId, deviceName: req.deviceName };
  }

  /** The device's poll: after approval the credential is minted and handed over exactly once (one transaction). */
  async poll(requestId: string, pollToken: string): Promise<PollOutcome> {
    const collected = await this.dataSource.transaction(async (tx) => {
      const [row] = returnedRows<{ agent_id: string; slug: string }>(await tx.query(
        `UPDATE gateway.device_sign_in SET status = 'collected' WHERE request_id = $1 AND poll_hash = $2 AND status = 'approved' RETURNING agent_id, slug`,
        [requestId, hashCredential(pollToken)],
      ));
      return row && { ...row, credential: (await this.identities.issueCredential(row.agent_id, tx)).credential };
    });
    if (collected) return { status: 'approved', credential: collected.credential, agentId: collected.agent_id, mcpPath: `/mcp/${collected.slug}` };
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
