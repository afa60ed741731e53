import { Controller, Get, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@gatehouse/http';
import { ROUTE_TABLE } from './endpoints/routes.js';

const NOT_HERE = 'served by the token server on the fast lane in front of Express and Nest';

const ROUTE_DECORATORS: Readonly<Record<string, (path: string) => MethodDecorator>> = {
  GET: Get,
  POST: Post,
};

/**
 * OpenAPI description of the token server's endpoints, one method per documented operation of the route table
 * (endpoints/routes.ts), in its order. The requests never reach these methods: the raw handlers (oidc-provider and
 * our endpoints) on the foundation's fast lane, in front of Express and Nest, answer them; this controller only
 * documents them and lets the route table know their methods.
 */
@ApiTags('OAuth 2.0 / OpenID Connect')
@Public()
@Controller()
export class OAuthDocsController {}

for (const route of ROUTE_TABLE) {
  for (const [method, { doc }] of Object.entries(route.methods)) {
    if (doc === undefined) continue;
    const { name } = doc;
    const handler = {
      [name](): never {
        throw new Error(NOT_HERE);
      },
    }[name];
    const proto = OAuthDocsController.prototype as unknown as Record<string, unknown>;
    const descriptor: PropertyDescriptor = { value: handler, writable: true, configurable: true };
    Object.defineProperty(proto, name, descriptor);
    // as the decorators of a method written in the class: the route's first, applied last
    const decorators = [ROUTE_DECORATORS[method](route.path.slice(1)), ...doc.decorators];
    const decorated = Reflect.decorate(decorators, proto, name, descriptor) as PropertyDescriptor | undefined;
    Object.defineProperty(proto, name, decorated ?? descriptor);
  }
}
