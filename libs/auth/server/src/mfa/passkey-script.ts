import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The one script of the token server's pages (served at PASSKEY_SCRIPT_PATH): it runs the WebAuthn ceremonies of
 * the forms marked `data-passkey` (pages.ts `passkeyForm`) and nothing else. A form stays hidden unless the browser
 * has WebAuthn; on submit the script POSTs the form's fields to `data-options` (JSON options back, or
 * `{error}` with a sentence to show), calls navigator.credentials.create/get, puts the answer (the JSON
 * @simplewebauthn/server reads) in the form's `credential` field and submits the form. A cancelled or failed
 * ceremony shows the form's alert (`data-error`; its `data-exists` text when the authenticator already holds a
 * passkey of the account) and sends nothing. No inline code, no third-party code: the
 * pages' CSP allows this file by its nonce and calls to this origin only.
 */
export const PASSKEY_SCRIPT = `// Gatehouse passkeys: the WebAuthn ceremonies of the sign-in and account pages.
const enc = (buf) => {
  let s = '';
  for (const b of new Uint8Array(buf)) s += String.fromCharCode(b);
  return btoa(s).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
};
const dec = (s) => {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
};
const creation = (o) => ({
  ...o,
  challenge: dec(o.challenge),
  user: { ...o.user, id: dec(o.user.id) },
  excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: dec(c.id) })),
});
const request = (o) => ({
  ...o,
  challenge: dec(o.challenge),
  allowCredentials: (o.allowCredentials || []).map((c) => ({ ...c, id: dec(c.id) })),
});
const answer = (cred) => {
  const r = cred.response;
  const response = { clientDataJSON: enc(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = enc(r.attestationObject);
    response.transports = typeof r.getTransports === 'function' ? r.getTransports() : [];
  } else {
    response.authenticatorData = enc(r.authenticatorData);
    response.signature = enc(r.signature);
    if (r.userHandle) response.userHandle = enc(r.userHandle);
  }
  return {
    id: cred.id,
    rawId: enc(cred.rawId),
    type: cred.type,
    response,
    clientExtensionResults: cred.getClientExtensionResults(),
    authenticatorAttachment: cred.authenticatorAttachment || undefined,
  };
};
for (const form of document.querySelectorAll('form[data-passkey]')) {
  if (!window.PublicKeyCredential || !navigator.credentials) continue;
  form.hidden = false;
  const alert = form.dataset.error ? document.getElementById(form.dataset.error) : null;
  const first = alert ? alert.textContent : '';
  const fail = (text) => {
    if (!alert) return;
    alert.textContent = text || first;
    alert.hidden = false;
  };
  let busy = false;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (busy) return;
    busy = true;
    if (alert) alert.hidden = true;
    try {
      const body = new URLSearchParams(new FormData(form));
      body.delete('credential');
      if (form.dataset.optionsAction) body.set('action', form.dataset.optionsAction);
      const res = await fetch(form.dataset.options, {
        method: 'POST',
        body,
        headers: { accept: 'application/json' },
        credentials: 'same-origin',
      });
      const json = await res.json();
      if (!res.ok || !json.publicKey) return fail(json.error);
      const cred =
        form.dataset.passkey === 'register'
          ? await navigator.credentials.create({ publicKey: creation(json.publicKey) })
          : await navigator.credentials.get({ publicKey: request(json.publicKey) });
      if (!cred) return fail();
      form.elements.credential.value = JSON.stringify(answer(cred));
      form.submit();
    } catch (err) {
      // an authenticator that holds one of the excluded credentials answers InvalidStateError
      fail(err && err.name === 'InvalidStateError' && alert ? alert.dataset.exists : undefined);
    } finally {
      busy = false;
    }
  });
}
`;

/** GET /assets/passkeys.js: the script, cacheable for an hour (it changes only with a release). */
export function servePasskeyScript(_req: IncomingMessage, res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
  res.setHeader('Cache-Control', 'public, max-age=3600');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.end(PASSKEY_SCRIPT);
}
