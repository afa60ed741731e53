import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { CALLER_KEY, type CallerInfo } from '@gatehouse/bearer';
import type { Actor } from './actor.js';
import { instanceKeyOf, type InstanceKey } from './instance.js';
import { preferredLanguage, type Language } from './language.js';
import { isUuid } from './params.js';

/** The caller as the author of a change: its token subject when that is a uuid (users, clients), else null. */
export function actorOf(caller: CallerInfo | undefined): Actor {
  const sub = caller?.sub;
  return { id: isUuid(sub) ? sub.toLowerCase() : null };
}

/** `@CurrentActor() actor: Actor` */
export const CurrentActor = createParamDecorator((_data: unknown, ctx: ExecutionContext): Actor =>
  actorOf(ctx.switchToHttp().getRequest<Record<string, CallerInfo | undefined>>()[CALLER_KEY]),
);

/** `@CurrentInstance() instance: InstanceKey`: the caller's instance, to which every tree request is confined. */
export const CurrentInstance = createParamDecorator((_data: unknown, ctx: ExecutionContext): InstanceKey =>
  instanceKeyOf(ctx.switchToHttp().getRequest<Record<string, CallerInfo | undefined>>()[CALLER_KEY]),
);

/** `@AcceptLanguage() lang?: Language`: the translation language the client asked for, if we have it. */
export const AcceptLanguage = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Language | undefined =>
    preferredLanguage(ctx.switchToHttp().getRequest<Request>().headers['accept-language']),
);
