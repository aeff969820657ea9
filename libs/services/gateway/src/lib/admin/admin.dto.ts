import { IsOptional, IsString, IsUUID, Length, Matches } from 'class-validator';

export class CreateOwnerDto {
  @IsString() @Length(1, 200) name!: string;
}

export class CreateAgentDto {
  @IsString() @Length(1, 200) name!: string;
}

export class CreateMcpUrlDto {
  @Matches(/^[a-z0-9][a-z0-9-]{1,62}$/, { message: 'slug must be 2-63 lower-case letters, digits or dashes' }) slug!: string;
  @IsOptional() @IsUUID() ownerId?: string;
}
