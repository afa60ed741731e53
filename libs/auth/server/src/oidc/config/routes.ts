import type { Configuration } from 'oidc-provider';

/** Paths of the token server (oidc-provider routes). */
export const ROUTES = {
  token: '/token',
  revocation: '/revoke',
  introspection: '/token/introspection',
  userinfo: '/userinfo',
  jwks: '/jwks',
  authorization: '/authorize',
  end_session: '/session/end',
  device_authorization: '/device/code',
  code_verification: '/device',
} as const;

/** The routes a browser opens (authorization and its resume, logout and its steps, the device pages). */
export const browserFacing = (path: string) =>
  path === ROUTES.authorization ||
  path.startsWith(`${ROUTES.authorization}/`) ||
  path === ROUTES.end_session ||
  path.startsWith(`${ROUTES.end_session}/`) ||
  path === ROUTES.code_verification ||
  path.startsWith(`${ROUTES.code_verification}/`);

export const routesConfig = (): Pick<Configuration, 'routes'> => ({ routes: { ...ROUTES } });
