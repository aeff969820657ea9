import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type SignInPoll, type SignInStarted } from '@tollgate/contracts';
import { ManageIdentitiesUseCase } from '../admin/manage-identities.usecase';
import { hashCredential } from '../authenticate/credential-hash';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { SignIns } from './sign-ins.repository';

export type PollOutcome = SignInPoll;

export type ApproveOutcome = { ok: true; agentId: string; deviceName: string } | { ok: false; reason: 'owner_key_invalid' | 'expired' | 'not_pending' | 'unknown' | 'url_not_found' };

const CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ23456789';

/**
 * The device flow of the local bridge (G2), in the spirit of OAuth's device
 * authorization grant: the device starts a request and polls with a secret
 * only it holds; the owner opens the approval page and approves with an owner
 * key; approval creates a new agent of that owner, and the device's first poll
 * after it mints that agent's credential and hands it over once. No credential
 * ever waits in the request: only its hash exists, in the credential
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
    if (!(await SignIns.urlIsEnabled(this.dataSource, slug))) return undefined;
    const requestId = randomUUID();
    const pollToken = randomBytes(32).toString('base64url');
    const code = Array.from({ length: 8 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
    const userCode = `${code.slice(0, 4)}-${code.slice(4)}`;
    const expiresAt = new Date(Date.now() + this.options.signInTtlMs);
    await SignIns.insert(this.dataSource, { request_id: requestId, poll_hash: hashCredential(pollToken), user_code: userCode, device_name: deviceName, slug, expires_at: expiresAt });
    return { requestId, pollToken, userCode, approvalUrl: `${publicBase}/signin/approve/${requestId}`, expiresAt: expiresAt.toISOString(), intervalMs: 1000 };
  }

  async describe(requestId: string): Promise<{ userCode: string; deviceName: string; slug: string; status: string; expired: boolean } | undefined> {
    const r = await SignIns.find(this.dataSource, requestId);
    return r && { userCode: r.user_code, deviceName: r.device_name, slug: r.slug, status: r.status, expired: r.expired };
  }

  /** The owner (known by an owner key, `OwnerApproval`) approves: a new agent of theirs for the device. */
  async approve(requestId: string, ownerId: string): Promise<ApproveOutcome> {
    const req = await this.describe(requestId);
    if (!req) return { ok: false, reason: 'unknown' };
    if (req.expired) return { ok: false, reason: 'expired' };
    if (req.status !== 'pending') return { ok: false, reason: 'not_pending' };
    const url = await SignIns.urlOwner(this.dataSource, req.slug);
    if (!url || (url.owner_id && url.owner_id !== ownerId)) return { ok: false, reason: 'url_not_found' };
    const { agentId } = await this.identities.createAgent(ownerId, `Device: ${req.deviceName}`.slice(0, 200));
    if (!(await SignIns.approve(this.dataSource, requestId, ownerId, agentId))) return { ok: false, reason: 'not_pending' };
    return { ok: true, agentId, deviceName: req.deviceName };
  }

  /** The device's poll: after approval the credential is minted and handed over exactly once (one transaction). */
  async poll(requestId: string, pollToken: string): Promise<PollOutcome> {
    const collected = await this.dataSource.transaction(async (tx) => {
      const row = await SignIns.collect(tx, requestId, hashCredential(pollToken));
      // Bound to the one URL the owner approved, as an OAuth access token is: the device reaches nothing else.
      return row && { ...row, credential: (await this.identities.issueCredential(row.agent_id, tx, row.slug)).credential };
    });
    if (collected) return { status: 'approved', credential: collected.credential, agentId: collected.agent_id, mcpPath: `/mcp/${collected.slug}` };
    const r = await SignIns.findForDevice(this.dataSource, requestId, hashCredential(pollToken));
    if (!r) return { status: 'unknown' };
    if (r.status === 'collected') return { status: 'collected' };
    if (r.expired) return { status: 'expired' };
    return { status: 'pending', expiresAt: r.expires_at.toISOString() };
  }

  async issueOwnerKey(ownerId: string): Promise<{ keyId: string; ownerKey: string } | undefined> {
    const keyId = randomUUID();
    const ownerKey = `tgo_${randomBytes(32).toString('base64url')}`;
    return (await SignIns.insertOwnerKey(this.dataSource, keyId, ownerId, hashCredential(ownerKey))) ? { keyId, ownerKey } : undefined;
  }
}
