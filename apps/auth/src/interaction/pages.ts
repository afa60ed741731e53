/**
 * The token server's pages: server-rendered HTML that needs no JavaScript, in English and Mongolian, usable by
 * keyboard and screen reader (labels, one h1, landmarks, errors announced with role="alert"). Every value shown
 * is escaped; styles come with the response's CSP nonce.
 */
import type { ServerResponse } from 'node:http';

export type Locale = 'en' | 'mn';

/** Path of an interaction's pages (login, consent). */
export const INTERACTION_PATH = '/interaction';

/** Headers of every page: no framing, no scripts, nothing cached or leaked in a Referer. */
export function pageHeaders(res: ServerResponse, nonce: string, formTargets: string[] = []): void {
  const formAction = ["'self'", ...formTargets].join(' ');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self'; form-action ${formAction}; ` +
      `base-uri 'none'; frame-ancestors 'none'`,
  );
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
}

const TEXT = {
  en: {
    signIn: 'Sign in',
    signInTo: (client: string) => `Sign in to continue to ${client}`,
    username: 'E-mail, user name or phone',
    password: 'Password',
    submit: 'Sign in',
    invalid: 'The sign-in details are not right. Check them and try again.',
    blocked: 'This account is blocked. Contact your administrator.',
    consent: 'Allow access',
    consentTo: (client: string) => `${client} asks for access to your account`,
    scopesIntro: 'It will be able to:',
    allow: 'Allow',
    deny: 'Deny',
    errorTitle: 'Something went wrong',
    signOut: 'Sign out',
    signOutQuestion: 'Do you want to sign out?',
    signOutYes: 'Sign out',
    signOutNo: 'Stay signed in',
    signedOut: 'You are signed out.',
    device: 'Connect a device',
    deviceCode: 'Code shown on your device',
    deviceNext: 'Continue',
    deviceWrong: 'That code is not right or has expired. Check it and try again.',
    deviceFailed: 'The request could not be processed. Start again on your device.',
    deviceConfirm: (client: string) => `${client} on a device asks to sign in with your account`,
    deviceMatch: 'Continue only if your device shows this code:',
    deviceYes: 'Continue',
    deviceAbort: 'Cancel',
    deviceDone: 'Done. You can go back to your device.',
    otpLink: 'Sign in with a one-time code',
    otpStart: 'Sign in with a code',
    otpUsername: 'E-mail or phone number',
    otpSend: 'Send me a code',
    otpSent: 'If an account has this address, a code is on its way. It works once, for 5 minutes.',
    otp: 'One-time code',
    otpSubmit: 'Sign in',
    otpWrong: 'That code is not right or has expired.',
    signUp: 'Create an account',
    signUpSubmit: 'Create account',
    email: 'E-mail',
    phone: 'Phone number (+976...)',
    emailOrPhone: 'Give an e-mail address or a phone number, and a password.',
    name: 'Name (optional)',
    verified: 'Your e-mail address is verified.',
    verifyFailed: 'This link is not valid any more. Ask for a new one.',
    back: 'Start again from the application you came from.',
    scopes: {
      openid: 'Know who you are',
      profile: 'See your name and profile',
      email: 'See your e-mail address',
      phone: 'See your phone number',
      address: 'See your address',
      offline_access: 'Stay signed in when you are away',
    } as Record<string, string>,
  },
  mn: {
    signIn: 'Нэвтрэх',
    signInTo: (client: string) => `${client} руу үргэлжлүүлэхийн тулд нэвтэрнэ үү`,
    username: 'И-мэйл, хэрэглэгчийн нэр эсвэл утас',
    password: 'Нууц үг',
    submit: 'Нэвтрэх',
    invalid: 'Нэвтрэх мэдээлэл буруу байна. Шалгаад дахин оролдоно уу.',
    blocked: 'Энэ бүртгэл хаагдсан байна. Админдаа хандана уу.',
    consent: 'Хандах эрх олгох',
    consentTo: (client: string) => `${client} таны бүртгэлд хандах эрх хүсэж байна`,
    scopesIntro: 'Дараах зүйлийг хийх боломжтой болно:',
    allow: 'Зөвшөөрөх',
    deny: 'Татгалзах',
    errorTitle: 'Алдаа гарлаа',
    signOut: 'Гарах',
    signOutQuestion: 'Та гарахыг хүсэж байна уу?',
    signOutYes: 'Гарах',
    signOutNo: 'Нэвтэрсэн хэвээр үлдэх',
    signedOut: 'Та системээс гарлаа.',
    device: 'Төхөөрөмж холбох',
    deviceCode: 'Төхөөрөмж дээр харагдаж буй код',
    deviceNext: 'Үргэлжлүүлэх',
    deviceWrong: 'Код буруу эсвэл хугацаа нь дууссан байна. Шалгаад дахин оролдоно уу.',
    deviceFailed: 'Хүсэлтийг боловсруулж чадсангүй. Төхөөрөмж дээрээ дахин эхлүүлнэ үү.',
    deviceConfirm: (client: string) => `${client} төхөөрөмж таны бүртгэлээр нэвтрэхийг хүсэж байна`,
    deviceMatch: 'Төхөөрөмж дээр энэ код харагдаж байвал л үргэлжлүүлнэ үү:',
    deviceYes: 'Үргэлжлүүлэх',
    deviceAbort: 'Цуцлах',
    deviceDone: 'Боллоо. Төхөөрөмж рүүгээ буцна уу.',
    otpLink: 'Нэг удаагийн кодоор нэвтрэх',
    otpStart: 'Кодоор нэвтрэх',
    otpUsername: 'И-мэйл эсвэл утасны дугаар',
    otpSend: 'Код илгээх',
    otpSent: 'Ийм хаягтай бүртгэл байвал код илгээгдлээ. Нэг удаа, 5 минутын турш хүчинтэй.',
    otp: 'Нэг удаагийн код',
    otpSubmit: 'Нэвтрэх',
    otpWrong: 'Код буруу эсвэл хугацаа нь дууссан байна.',
    signUp: 'Бүртгэл үүсгэх',
    signUpSubmit: 'Бүртгүүлэх',
    email: 'И-мэйл',
    phone: 'Утасны дугаар (+976...)',
    emailOrPhone: 'И-мэйл хаяг эсвэл утасны дугаар, нууц үгээ оруулна уу.',
    name: 'Нэр (заавал биш)',
    verified: 'Таны и-мэйл хаяг баталгаажлаа.',
    verifyFailed: 'Энэ холбоос хүчингүй болсон байна. Шинээр хүснэ үү.',
    back: 'Ирсэн програмаасаа дахин эхлүүлнэ үү.',
    scopes: {
      openid: 'Таныг хэн болохыг мэдэх',
      profile: 'Таны нэр, профайлыг харах',
      email: 'Таны и-мэйл хаягийг харах',
      phone: 'Таны утасны дугаарыг харах',
      address: 'Таны хаягийг харах',
      offline_access: 'Таныг байхгүй үед ч нэвтэрсэн хэвээр байх',
    } as Record<string, string>,
  },
} as const;

export type LoginFailureText = 'invalid' | 'blocked';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

/**
 * The page language: the first of `ui_locales` we have (OIDC, space-separated, `mn`, `mn-MN`, `mn_MN`), else the
 * first of `Accept-Language`, else English.
 */
export function pickLocale(
  uiLocales: string | undefined,
  acceptLanguage: string | undefined,
  supported?: readonly string[],
): Locale {
  const primary = (tag: string) => tag.trim().toLowerCase().split(/[-_]/)[0];
  const isPage = (lang: string): lang is Locale => lang === 'mn' || lang === 'en';
  // The instance's supported_locales narrow the choice to those of its languages the pages have (none of them: all).
  const allowed = new Set((supported ?? []).map(primary).filter(isPage));
  const ok = (lang: string): lang is Locale => isPage(lang) && (allowed.size === 0 || allowed.has(lang));
  const candidates = [
    ...(uiLocales ?? '').split(/\s+/),
    ...(acceptLanguage ?? '').split(',').map((part) => part.split(';')[0]),
  ];
  for (const c of candidates) {
    const lang = primary(c);
    if (ok(lang)) return lang;
  }
  // Nothing asked for that the instance supports: its first supported language the pages have, else English.
  return (supported ?? []).map(primary).find(ok) ?? 'en';
}

const STYLE = `body{font-family:system-ui,sans-serif;margin:0;background:#f5f5f7;color:#1d1d1f}
main{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:.5rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.5rem;margin-top:0}label{display:block;margin:1rem 0 .25rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.6rem;font-size:1rem;border:1px solid #888;border-radius:.25rem}
button{margin-top:1.25rem;padding:.6rem 1.2rem;font-size:1rem;border-radius:.25rem;border:1px solid #0b57d0;
background:#0b57d0;color:#fff;cursor:pointer}button.secondary{background:#fff;color:#0b57d0;margin-left:.5rem}
:focus-visible{outline:3px solid #f4b400;outline-offset:2px}.alert{background:#fde7e9;border:1px solid #b3261e;
padding:.75rem;border-radius:.25rem}ul{padding-left:1.25rem}`;

export function layout(locale: Locale, title: string, nonce: string, body: string): string {
  return `<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

export interface LoginPageInput {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  clientName: string;
  username?: string;
  error?: LoginFailureText;
  /** The sign-up page, when the client allows sign-up. */
  signupHref?: string;
  /** The one-time code page, when the client may use codes. */
  otpHref?: string;
}

export function loginPage(o: LoginPageInput): string {
  const t = TEXT[o.locale];
  const error = o.error ? `<p class="alert" role="alert" id="login-error">${escapeHtml(t[o.error])}</p>` : '';
  const describedBy = o.error ? ' aria-describedby="login-error"' : '';
  return layout(
    o.locale,
    t.signIn,
    o.nonce,
    `<h1>${escapeHtml(t.signIn)}</h1>
<p>${escapeHtml(t.signInTo(o.clientName))}</p>
${error}
<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="username">${escapeHtml(t.username)}</label>
<input id="username" name="username" type="text" autocomplete="username" required autofocus value="${escapeHtml(o.username ?? '')}"${describedBy}>
<label for="password">${escapeHtml(t.password)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${describedBy}>
<button type="submit">${escapeHtml(t.submit)}</button>
</form>${o.otpHref ? `\n<p><a href="${escapeHtml(o.otpHref)}">${escapeHtml(t.otpLink)}</a></p>` : ''}${o.signupHref ? `\n<p><a href="${escapeHtml(o.signupHref)}">${escapeHtml(t.signUp)}</a></p>` : ''}`,
  );
}

/** Sign-up: `email` or `phone`, `password`, `name`; the user is signed in once the account exists. */
export function signupPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  error?: string;
  values?: { email?: string; phone?: string; name?: string };
}): string {
  const t = TEXT[o.locale];
  const v = o.values ?? {};
  const error = o.error ? `<p class="alert" role="alert" id="signup-error">${escapeHtml(o.error)}</p>` : '';
  return layout(
    o.locale,
    t.signUp,
    o.nonce,
    `<h1>${escapeHtml(t.signUp)}</h1>
<p>${escapeHtml(t.emailOrPhone)}</p>
${error}
<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="email">${escapeHtml(t.email)}</label>
<input id="email" name="email" type="email" autocomplete="email" value="${escapeHtml(v.email ?? '')}">
<label for="phone">${escapeHtml(t.phone)}</label>
<input id="phone" name="phone" type="tel" autocomplete="tel" value="${escapeHtml(v.phone ?? '')}">
<label for="name">${escapeHtml(t.name)}</label>
<input id="name" name="name" type="text" autocomplete="name" value="${escapeHtml(v.name ?? '')}">
<label for="password">${escapeHtml(t.password)}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required>
<button type="submit">${escapeHtml(t.signUpSubmit)}</button>
</form>`,
  );
}

/** A one-message page (e-mail verification). */
export function messagePage(o: {
  locale: Locale;
  nonce: string;
  message: 'verified' | 'verifyFailed';
}): string {
  const t = TEXT[o.locale];
  return layout(
    o.locale,
    t.email,
    o.nonce,
    `<h1>${escapeHtml(t.email)}</h1>\n<p role="status">${escapeHtml(t[o.message])}</p>`,
  );
}

export interface ConsentPageInput {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  clientName: string;
  /** OIDC scopes (described by us) and resource scopes (described by their resource). */
  scopes: { name: string; description?: string | null }[];
}

export function consentPage(o: ConsentPageInput): string {
  const t = TEXT[o.locale];
  const items = o.scopes
    .map((s) => {
      const description = s.description ?? t.scopes[s.name];
      return `<li><strong>${escapeHtml(s.name)}</strong>${description ? ` – ${escapeHtml(description)}` : ''}</li>`;
    })
    .join('\n');
  return layout(
    o.locale,
    t.consent,
    o.nonce,
    `<h1>${escapeHtml(t.consent)}</h1>
<p>${escapeHtml(t.consentTo(o.clientName))}</p>
<p id="scopes-intro">${escapeHtml(t.scopesIntro)}</p>
<ul aria-labelledby="scopes-intro">
${items}
</ul>
<form method="post" action="${escapeHtml(o.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<button type="submit" name="decision" value="allow">${escapeHtml(t.allow)}</button>
<button type="submit" name="decision" value="deny" class="secondary">${escapeHtml(t.deny)}</button>
</form>`,
  );
}

export function errorPage(o: { locale: Locale; nonce: string; message: string }): string {
  const t = TEXT[o.locale];
  return layout(
    o.locale,
    t.errorTitle,
    o.nonce,
    `<h1>${escapeHtml(t.errorTitle)}</h1>
<p class="alert" role="alert">${escapeHtml(o.message)}</p>
<p>${escapeHtml(t.back)}</p>`,
  );
}

/** The origin of a URL as a CSP source (none for anything that is not a URL). */
export function originOf(url: string): string[] {
  try {
    return url ? [new URL(url).origin] : [];
  } catch {
    return [];
  }
}

/**
 * RP-initiated logout's confirmation. `form` is oidc-provider's own form (its action and xsrf token); the buttons
 * submit it through the `form` attribute, so no script is needed.
 */
export function logoutPage(o: { locale: Locale; nonce: string; form: string }): string {
  const t = TEXT[o.locale];
  const formId = /id="([^"]+)"/.exec(o.form)?.[1] ?? 'op.logoutForm';
  return layout(
    o.locale,
    t.signOut,
    o.nonce,
    `<h1>${escapeHtml(t.signOut)}</h1>
<p>${escapeHtml(t.signOutQuestion)}</p>
${o.form}
<button type="submit" form="${escapeHtml(formId)}" name="logout" value="yes">${escapeHtml(t.signOutYes)}</button>
<button type="submit" form="${escapeHtml(formId)}" class="secondary">${escapeHtml(t.signOutNo)}</button>`,
  );
}

export function loggedOutPage(o: { locale: Locale; nonce: string }): string {
  const t = TEXT[o.locale];
  return layout(
    o.locale,
    t.signOut,
    o.nonce,
    `<h1>${escapeHtml(t.signOut)}</h1>\n<p>${escapeHtml(t.signedOut)}</p>`,
  );
}

/** The action and the xsrf token of a form oidc-provider renders (its pages are ours; its checks stay its own). */
function providerForm(form: string): { action: string; xsrf: string } {
  return {
    action: /action="([^"]+)"/.exec(form)?.[1] ?? '',
    xsrf: /name="xsrf" value="([^"]+)"/.exec(form)?.[1] ?? '',
  };
}

/** RFC 8628 user code entry (field `user_code`). */
export function deviceCodePage(o: {
  locale: Locale;
  nonce: string;
  form: string;
  error?: 'wrong' | 'failed';
}): string {
  const t = TEXT[o.locale];
  const f = providerForm(o.form);
  const error = o.error
    ? `<p class="alert" role="alert" id="code-error">${escapeHtml(o.error === 'wrong' ? t.deviceWrong : t.deviceFailed)}</p>`
    : '';
  return layout(
    o.locale,
    t.device,
    o.nonce,
    `<h1>${escapeHtml(t.device)}</h1>
${error}
<form method="post" action="${escapeHtml(f.action)}" novalidate>
<input type="hidden" name="xsrf" value="${escapeHtml(f.xsrf)}">
<label for="user_code">${escapeHtml(t.deviceCode)}</label>
<input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" required autofocus${o.error ? ' aria-describedby="code-error"' : ''}>
<button type="submit">${escapeHtml(t.deviceNext)}</button>
</form>`,
  );
}

/** The device's code shown back before the sign-in goes on (a user must not approve someone else's device). */
export function deviceConfirmPage(o: {
  locale: Locale;
  nonce: string;
  form: string;
  clientName: string;
  userCode: string;
}): string {
  const t = TEXT[o.locale];
  const f = providerForm(o.form);
  return layout(
    o.locale,
    t.device,
    o.nonce,
    `<h1>${escapeHtml(t.device)}</h1>
<p>${escapeHtml(t.deviceConfirm(o.clientName))}</p>
<p>${escapeHtml(t.deviceMatch)} <strong id="user-code">${escapeHtml(o.userCode)}</strong></p>
<form method="post" action="${escapeHtml(f.action)}">
<input type="hidden" name="xsrf" value="${escapeHtml(f.xsrf)}">
<input type="hidden" name="user_code" value="${escapeHtml(o.userCode)}">
<button type="submit" name="confirm" value="yes">${escapeHtml(t.deviceYes)}</button>
<button type="submit" name="abort" value="yes" class="secondary">${escapeHtml(t.deviceAbort)}</button>
</form>`,
  );
}

export function deviceDonePage(o: { locale: Locale; nonce: string }): string {
  const t = TEXT[o.locale];
  return layout(
    o.locale,
    t.device,
    o.nonce,
    `<h1>${escapeHtml(t.device)}</h1>\n<p role="status">${escapeHtml(t.deviceDone)}</p>`,
  );
}

/** One-time code sign-in: the username form, then (`username` given) the code form (field `otp`). */
export function otpPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  username?: string;
  error?: 'wrong' | string;
}): string {
  const t = TEXT[o.locale];
  const error = o.error
    ? `<p class="alert" role="alert" id="otp-error">${escapeHtml(o.error === 'wrong' ? t.otpWrong : o.error)}</p>`
    : '';
  const described = o.error ? ' aria-describedby="otp-error"' : '';
  const fields = o.username
    ? `<p role="status">${escapeHtml(t.otpSent)}</p>
<input type="hidden" name="username" value="${escapeHtml(o.username)}">
<label for="otp">${escapeHtml(t.otp)}</label>
<input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required autofocus${described}>
<button type="submit">${escapeHtml(t.otpSubmit)}</button>`
    : `<label for="username">${escapeHtml(t.otpUsername)}</label>
<input id="username" name="username" type="text" autocomplete="username" required autofocus${described}>
<button type="submit">${escapeHtml(t.otpSend)}</button>`;
  return layout(
    o.locale,
    t.otpStart,
    o.nonce,
    `<h1>${escapeHtml(t.otpStart)}</h1>
${error}
<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
${fields}
</form>`,
  );
}
