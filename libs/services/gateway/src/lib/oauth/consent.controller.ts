import { randomBytes, randomUUID } from 'node:crypto';
import { Body, Controller, Get, Header, Param, ParseUUIDPipe, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';
import { type Request, type Response } from 'express';
import { type DataSource } from 'typeorm';
import { ManageIdentitiesUseCase } from '../admin/manage-identities.usecase';
import { hashCredential } from '../authenticate/credential-hash';
import { GATEWAY } from '../gateway.constants';
import { escapeHtml, OwnerApproval, ownerPageHeaders, page } from '../sign-in/owner-approval';
import { SignIns } from '../sign-in/sign-ins.repository';
import { OAuthRecords, type OAuthRequestRead } from './oauth.repository';

export class ConsentDto {
  @IsIn(['approve', 'deny']) decision!: 'approve' | 'deny';
  @IsOptional() @IsString() @Length(0, 200) ownerKey?: string;
}

/** Where the client gets its answer: the code (or the error), its state, and the issuer (RFC 9207). */
function answerUrl(r: OAuthRequestRead, params: Record<string, string>): string {
  const url = new URL(r.redirect_uri);
  for (const [k, v] of Object.entries({ ...params, ...(r.state !== null ? { state: r.state } : {}), iss: r.issuer })) url.searchParams.set(k, v);
  return url.href;
}

/**
 * The consent page of the OAuth sign-in: the owner's approval, as for a device of the local bridge. The owner names
 * themself with an owner key; approving creates a new agent of theirs for this client and grants it the one MCP URL
 * the client asked for (its resource indicator). Nothing is granted before that; a denial answers `access_denied`.
 */
@ApiTags('sign-in')
@Controller('oauth/consent')
export class ConsentController {
  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    private readonly owners: OwnerApproval,
    private readonly identities: ManageIdentitiesUseCase,
  ) {}

  @Get(':requestId')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  async show(@Param('requestId', new ParseUUIDPipe()) requestId: string, @Res() res: Response): Promise<void> {
    const r = await OAuthRecords.request(this.dataSource, requestId);
    if (!r) return void res.status(404).send(page('Sign-in not found', '<p>This sign-in link is not valid.</p>'));
    if (r.expired || r.decided_at) return void res.status(410).send(page('Sign-in ended', '<p>This sign-in has ended. Start it again from the app.</p>'));
    // The form's answer redirects to the client, so its origin is a form target too.
    ownerPageHeaders(res, [new URL(r.redirect_uri).origin]);
    const from = URL.canParse(r.client_id) ? new URL(r.client_id).host : 'a registered app';
    res.send(page('Allow this app?', `<p><b>${escapeHtml(r.client_name)}</b> (${escapeHtml(from)}) asks to use the Tollgate URL <b>/mcp/${escapeHtml(r.slug)}</b>
as a new agent of yours. It can do what that agent may on that URL, and spend from your wallet as your spend policy allows.</p>
<p>After approving you return to <b>${escapeHtml(new URL(r.redirect_uri).host)}</b>.</p>
<form method="post" action="/oauth/consent/${requestId}"><label for="ownerKey">Owner key</label>
<input id="ownerKey" name="ownerKey" type="password" autocomplete="current-password">
<button type="submit" name="decision" value="approve">Allow</button><button type="submit" name="decision" value="deny" formnovalidate>Deny</button></form>`));
  }

  @Post(':requestId')
  @Header('Cache-Control', 'no-store')
  async decide(@Param('requestId', new ParseUUIDPipe()) requestId: string, @Body() dto: ConsentDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const r = await OAuthRecords.request(this.dataSource, requestId);
    // The answer redirects to the client, so its origin is a form target here too.
    ownerPageHeaders(res, r ? [new URL(r.redirect_uri).origin] : []);
    if (!r) return void res.status(404).type('html').send(page('Sign-in not found', '<p>This sign-in link is not valid.</p>'));
    if (r.expired || r.decided_at) return void res.status(410).type('html').send(page('Sign-in ended', '<p>This sign-in has ended. Start it again from the app.</p>'));
    if (dto.decision === 'deny') {
      await OAuthRecords.deny(this.dataSource, requestId);
      return void res.redirect(303, answerUrl(r, { error: 'access_denied', error_description: 'The owner denied the request.' }));
    }
    const refused = (status: number, text: string) => void res.status(status).type('html').send(page('Not allowed', `<p>${escapeHtml(text)}</p>`));
    const owner = await this.owners.ownerOf(dto.ownerKey ?? '', req.ip ?? 'unknown');
    if (!owner.ok) return owner.reason === 'limited' ? refused(429, 'Too many attempts. Wait a minute, then try again.') : refused(403, 'That owner key is not valid.');
    const url = await SignIns.urlOwner(this.dataSource, r.slug);
    if (!url || (url.owner_id && url.owner_id !== owner.ownerId)) return refused(404, 'No MCP server at this URL for your account.');
    const code = await this.grant(r, owner.ownerId);
    if (!code) return refused(409, 'This sign-in was already decided.');
    res.redirect(303, answerUrl(r, { code }));
  }

  /** A new agent of the owner, the grant and the one-time code, once (a second approval of the request grants nothing). */
  private async grant(r: OAuthRequestRead, ownerId: string): Promise<string | undefined> {
    const { agentId } = await this.identities.createAgent(ownerId, `App: ${r.client_name}`.slice(0, 200));
    const code = `tgo_${randomBytes(32).toString('base64url')}`;
    const grant = { grant_id: randomUUID(), client_id: r.client_id, client_name: r.client_name, owner_id: ownerId, agent_id: agentId, mcp_url_id: r.mcp_url_id, scopes: r.scopes };
    return this.dataSource.transaction(async (m) => {
      if (await OAuthRecords.approve(m, r.request_id, grant, hashCredential(code))) return code;
      throw new AlreadyDecided();
    }).catch((e: unknown) => {
      if (e instanceof AlreadyDecided) return undefined;
      throw e;
    });
  }
}

class AlreadyDecided extends Error {}
