import { Body, Controller, Get, Header, HttpCode, HttpException, HttpStatus, NotFoundException, Param, ParseUUIDPipe, Post, Req, Res, UseGuards } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { type Request, type Response } from 'express';
import { adminTokenGuard } from '@tollgate/http';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { RateLimits } from '../rate-limit/rate-limits.service';
import { DeviceSignInUseCase } from './device-sign-in.usecase';
import { escapeHtml, OwnerApproval, ownerPageHeaders, page } from './owner-approval';
import { type OwnerKeyRow, SignIns } from './sign-ins.repository';

export class StartSignInDto {
  @IsString() @Length(1, 100) deviceName!: string;
  @Matches(/^[a-z0-9][a-z0-9-]{1,62}$/) slug!: string;
}

export class PollSignInDto {
  @IsString() @Length(20, 200) pollToken!: string;
}

export class ApproveSignInDto {
  @IsString() @Length(1, 200) ownerKey!: string;
}

/** The device sign-in of the local bridge (G2): start and poll for the device, the approval page for the owner. */
@ApiTags('sign-in')
@Controller('signin')
export class SignInController {
  constructor(
    private readonly signIn: DeviceSignInUseCase,
    private readonly limits: RateLimits,
    private readonly owners: OwnerApproval,
  ) {}

  /** At most 10 sign-ins started per client address and UTC minute. */
  @Post('device')
  async start(@Body() dto: StartSignInDto, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const allowed = await this.limits.consume('signIns', `addr:${req.ip ?? 'unknown'}`);
    if (!allowed.ok) {
      res.setHeader('Retry-After', String(Math.ceil(allowed.retryAfterMs / 1000)));
      throw new HttpException({ code: 'RATE_LIMITED', retryable: true, retryAfterMs: allowed.retryAfterMs, message: 'Too many sign-ins from this address; try again in a minute.' }, HttpStatus.TOO_MANY_REQUESTS);
    }
    const started = await this.signIn.start(dto.deviceName, dto.slug, `${req.protocol}://${req.get('host')}`);
    if (!started) throw new NotFoundException({ code: 'MCP_URL_NOT_FOUND', message: 'No MCP server at this URL' });
    return started;
  }

  @Post('device/:requestId/poll')
  @HttpCode(200)
  poll(@Param('requestId', new ParseUUIDPipe()) requestId: string, @Body() dto: PollSignInDto) {
    return this.signIn.poll(requestId, dto.pollToken);
  }

  @Get('approve/:requestId')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  async approvalPage(@Param('requestId', new ParseUUIDPipe()) requestId: string, @Res() res: Response): Promise<void> {
    ownerPageHeaders(res);
    const r = await this.signIn.describe(requestId);
    if (!r) return void res.status(404).send(page('Sign-in not found', '<p>This sign-in link is not valid.</p>'));
    if (r.expired || r.status !== 'pending') {
      return void res.status(410).send(page('Sign-in ended', '<p>This sign-in has ended. Start a new one from the app or the terminal.</p>'));
    }
    res.send(page('Approve a device', `<p><b>${escapeHtml(r.deviceName)}</b> asks to use the Tollgate URL <b>/mcp/${escapeHtml(r.slug)}</b>.</p>
<p>Check that the app shows this code:</p><p><code>${escapeHtml(r.userCode)}</code></p>
<form method="post" action="/signin/approve/${requestId}"><label for="ownerKey">Owner key</label>
<input id="ownerKey" name="ownerKey" type="password" autocomplete="current-password" required><button type="submit">Approve this device</button></form>`));
  }

  @Post('approve/:requestId')
  @HttpCode(200)
  @Header('Content-Type', 'text/html; charset=utf-8')
  async approve(@Param('requestId', new ParseUUIDPipe()) requestId: string, @Body() dto: ApproveSignInDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    ownerPageHeaders(res);
    const owner = await this.owners.ownerOf(dto.ownerKey, req.ip ?? 'unknown');
    if (!owner.ok && owner.reason === 'limited') return void res.status(429).send(page('Not approved', '<p>Too many attempts. Wait a minute, then try again.</p>'));
    const out = owner.ok ? await this.signIn.approve(requestId, owner.ownerId) : { ok: false as const, reason: 'owner_key_invalid' as const };
    if (out.ok) return void res.send(page('Device approved', `<p><b>${escapeHtml(out.deviceName)}</b> is connected. Return to the app: its tools appear there.</p>`));
    const [status, text] = {
      owner_key_invalid: [403, 'That owner key is not valid.'],
      expired: [410, 'This sign-in has expired. Start a new one from the app or the terminal.'],
      not_pending: [409, 'This sign-in was already decided.'],
      unknown: [404, 'This sign-in link is not valid.'],
      url_not_found: [404, 'No MCP server at this URL for your account.'],
    }[out.reason] as [number, string];
    res.status(status).send(page('Not approved', `<p>${escapeHtml(text)}</p>`));
  }
}

/** An owner key as its owner and admins see it: never its secret. */
const keyView = (k: OwnerKeyRow) => ({ keyId: k.key_id, ownerId: k.owner_id, createdAt: k.created_at.toISOString(), revokedAt: k.revoked_at?.toISOString() ?? null });

/**
 * The owner's own keys, listed and revoked with an owner key (a lost or leaked key is ended by another of the
 * owner's keys, or by an admin). Every check reads PostgreSQL, so a revocation holds on every replica at once.
 */
@ApiTags('sign-in')
@Controller('signin/owner-keys')
export class OwnKeysController {
  constructor(@InjectDataSource(GATEWAY) private readonly dataSource: DataSource, private readonly owners: OwnerApproval) {}

  @Post()
  @HttpCode(200)
  async list(@Body() dto: ApproveSignInDto, @Req() req: Request) {
    return { ownerKeys: (await SignIns.ownerKeys(this.dataSource, await this.owners.ownerOrRefuse(dto.ownerKey, req.ip ?? 'unknown'))).map(keyView) };
  }

  @Post(':keyId/revoke')
  @HttpCode(200)
  async revoke(@Param('keyId', new ParseUUIDPipe()) keyId: string, @Body() dto: ApproveSignInDto, @Req() req: Request) {
    const ownerId = await this.owners.ownerOrRefuse(dto.ownerKey, req.ip ?? 'unknown');
    if (!(await SignIns.revokeOwnerKey(this.dataSource, keyId, ownerId))) throw new NotFoundException({ code: 'OWNER_KEY_NOT_FOUND', message: 'No such live owner key of yours.' });
    return { keyId, revoked: true };
  }
}

@ApiTags('admin')
@ApiBearerAuth()
@Controller('admin')
@UseGuards(adminTokenGuard(GATEWAY_OPTIONS))
export class OwnerKeysController {
  constructor(private readonly signIn: DeviceSignInUseCase, @InjectDataSource(GATEWAY) private readonly dataSource: DataSource) {}

  @Get('owners/:ownerId/owner-keys')
  async list(@Param('ownerId', new ParseUUIDPipe()) ownerId: string) {
    return { ownerKeys: (await SignIns.ownerKeys(this.dataSource, ownerId)).map(keyView) };
  }

  @Post('owners/:ownerId/owner-keys/:keyId/revoke')
  @HttpCode(200)
  async revoke(@Param('ownerId', new ParseUUIDPipe()) ownerId: string, @Param('keyId', new ParseUUIDPipe()) keyId: string) {
    if (!(await SignIns.revokeOwnerKey(this.dataSource, keyId, ownerId))) throw new NotFoundException({ code: 'OWNER_KEY_NOT_FOUND', message: 'No such live owner key.' });
    return { keyId, revoked: true };
  }

  /** An owner key (shown once) with which the owner approves devices on the sign-in page. */
  @Post('owners/:ownerId/owner-keys')
  async issue(@Param('ownerId', new ParseUUIDPipe()) ownerId: string) {
    const key = await this.signIn.issueOwnerKey(ownerId);
    if (!key) throw new NotFoundException({ code: 'OWNER_NOT_FOUND', message: 'No such owner.' });
    return key;
  }
}
