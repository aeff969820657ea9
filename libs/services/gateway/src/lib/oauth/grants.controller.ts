import { Body, Controller, Get, HttpCode, Injectable, NotFoundException, Param, ParseUUIDPipe, Post, Query, Req, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { type Request } from 'express';
import { type DataSource } from 'typeorm';
import { adminTokenGuard } from '@tollgate/http';
import { IdentityCache } from '../authenticate/identity-cache.service';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { OwnerApproval } from '../sign-in/owner-approval';
import { type ListedGrant, OAuthRecords } from './oauth.repository';

export class OwnerKeyDto {
  @IsString() @Length(1, 200) ownerKey!: string;
}

export class GrantsQueryDto {
  @IsOptional() @IsUUID() ownerId?: string;
}

/** A grant as owners and admins see it: who, for which URL, since when; never a token. */
function view(g: ListedGrant) {
  return {
    grantId: g.grant_id, clientId: g.client_id, clientName: g.client_name, ownerId: g.owner_id, agentId: g.agent_id, mcpPath: `/mcp/${g.slug}`,
    scopes: g.scopes.split(' '), createdAt: g.created_at.toISOString(), lastRefreshedAt: g.refreshed_at?.toISOString() ?? null,
    revokedAt: g.revoked_at?.toISOString() ?? null, liveAccessTokens: g.live_tokens,
  };
}

/** Listing and revoking OAuth grants; a revocation ends the grant's refresh token and every access token it issued at once. */
@Injectable()
export class OAuthGrants {
  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    private readonly cache: IdentityCache,
  ) {}

  async list(ownerId?: string) {
    return { grants: (await OAuthRecords.listGrants(this.dataSource, ownerId)).map(view) };
  }

  async revoke(grantId: string, ownerId?: string) {
    if (!(await OAuthRecords.revokeGrant(this.dataSource, grantId, ownerId))) throw new NotFoundException({ code: 'GRANT_NOT_FOUND', message: 'No such live grant.' });
    await this.cache.changed(this.dataSource);
    return { grantId, revoked: true };
  }
}

/** The owner's own apps: listed and revoked with an owner key (the same key that approves them). */
@ApiTags('sign-in')
@Controller('oauth/grants')
export class OwnerGrantsController {
  constructor(private readonly grants: OAuthGrants, private readonly owners: OwnerApproval) {}

  @Post()
  @HttpCode(200)
  async list(@Body() dto: OwnerKeyDto, @Req() req: Request) {
    return this.grants.list(await this.ownerOf(dto, req));
  }

  @Post(':grantId/revoke')
  @HttpCode(200)
  async revoke(@Param('grantId', new ParseUUIDPipe()) grantId: string, @Body() dto: OwnerKeyDto, @Req() req: Request) {
    return this.grants.revoke(grantId, await this.ownerOf(dto, req));
  }

  private ownerOf(dto: OwnerKeyDto, req: Request): Promise<string> {
    return this.owners.ownerOrRefuse(dto.ownerKey, req.ip ?? 'unknown');
  }
}

@ApiTags('admin')
@ApiBearerAuth()
@Controller('admin/oauth/grants')
@UseGuards(adminTokenGuard(GATEWAY_OPTIONS))
export class AdminGrantsController {
  constructor(private readonly grants: OAuthGrants) {}

  @Get()
  list(@Query() q: GrantsQueryDto) {
    return this.grants.list(q.ownerId);
  }

  @Post(':grantId/revoke')
  @HttpCode(200)
  revoke(@Param('grantId', new ParseUUIDPipe()) grantId: string) {
    return this.grants.revoke(grantId);
  }
}
