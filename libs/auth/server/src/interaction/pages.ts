/**
 * The token server's pages: server-rendered HTML that needs no JavaScript, in English and Mongolian, usable by
 * keyboard and screen reader (labels, one h1, landmarks, errors announced with role="alert"). Every value shown
 * is escaped; styles come with the response's CSP nonce.
 */
import type { ServerResponse } from 'node:http';
import { checkPasswordPolicy, MAX_PASSWORD_LENGTH } from '@gatehouse/identity-data';

export type Locale = 'en' | 'mn';

/** Path of an interaction's pages (login, consent). */
export const INTERACTION_PATH = '/interaction';

/** Where the passkey pages' one script is served (PASSKEY_SCRIPT, a static file of the token server). */
export const PASSKEY_SCRIPT_PATH = '/assets/passkeys.js';

/**
 * Headers of every page: no framing, no scripts, nothing cached or leaked in a Referer. A page offering passkeys
 * (`passkeys`) runs one script, the token server's own file with the page's nonce, which may call this origin (the
 * ceremony's options): `script-src 'nonce-…'` and `connect-src 'self'`, nothing inline, nothing else.
 */
export function pageHeaders(
  res: ServerResponse,
  nonce: string,
  formTargets: string[] = [],
  opts: { passkeys?: boolean } = {},
): void {
  const formAction = ["'self'", ...formTargets].join(' ');
  const script = opts.passkeys ? `script-src 'nonce-${nonce}'; connect-src 'self'; ` : '';
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; ${script}style-src 'nonce-${nonce}'; img-src 'self'; form-action ${formAction}; ` +
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
    signedInAs: (who: string) => `Signed in as ${who}.`,
    switchAccount: 'Not you? Switch account',
    yourAccount: 'With your account:',
    onApi: (api: string) => `On ${api}:`,
    scopeFallback: (name: string) => {
      const m = /^([a-z]+)[:._-](.+)$/i.exec(name);
      const verbs: Record<string, string> = {
        read: 'Read',
        write: 'Change',
        update: 'Change',
        create: 'Create',
        delete: 'Delete',
        manage: 'Manage',
      };
      const verb = m ? verbs[m[1].toLowerCase()] : undefined;
      return verb ? `${verb} ${m![2].replace(/[_:.-]+/g, ' ')}` : `Use the permission “${name}”`;
    },
    forgot: 'Forgot password?',
    forgotTitle: 'Reset your password',
    forgotIntro: 'Give the e-mail address of your account. We will send it a link to choose a new password.',
    forgotSubmit: 'Send the link',
    forgotSent:
      'If an account has this address, a link to choose a new password is on its way. It works once, for one hour.',
    forgotBadEmail: 'Give an e-mail address, like name@example.com.',
    backToSignIn: 'Back to sign-in',
    signupSent: (email: string) =>
      `Check your e-mail: we sent a message to ${email}. If the account is new, sign in below with the password you chose.`,
    signupPhoneDone:
      'If this phone number can be used, your account is ready: sign in below with your password.',
    passwordRules: 'The password needs:',
    signupErrors: {
      none: 'Give an e-mail address or a phone number.',
      email: 'This is not an e-mail address. Check it, for example name@example.com.',
      phone: 'Give the phone number with its country code, for example +97699112233.',
      password: 'Choose a password that meets the rules below.',
      passwordMissing: 'Choose a password.',
      tooMany: 'Too many accounts were created from here. Try again later.',
    },
    problem: 'Please correct this:',
    minLength: (n: number) => `At least ${n} characters`,
    maxLength: (n: number) => `At most ${n} characters`,
    deviceCancelled: 'You cancelled. Nothing was connected; you can close this page.',
    signOutOf: (client: string) => `You are signing out of ${client}.`,
    signOutAccount: (who: string) => `Account: ${who}`,
    continue: 'Continue',
    otpBadUsername: 'Give an e-mail address or a phone number (+976...).',
    pageErrors: {
      notFound: 'This page does not exist.',
      method: 'This page cannot be used this way.',
      expired: 'This sign-in request has expired or is not known.',
      cannotContinue: 'This request cannot continue here.',
      noCodes: 'This application does not allow sign-in with a code.',
      noSignup: 'This application does not allow creating an account.',
      csrf: 'The form could not be verified. Go back and try again.',
      noSignIn: 'No sign-in is expected here.',
      noConsent: 'No consent is expected here.',
      unknownApp: 'The application of this request is not known.',
      badForm: 'The form could not be read. Go back and try again.',
    },
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
    passkeySignIn: 'Sign in with a passkey',
    passkeyOr: 'or',
    passkeyMfa: 'Use a passkey',
    passkeyMfaIntro: 'Or confirm with a passkey saved on this device or a security key.',
    passkeyOnlyIntro:
      'Confirm it is you with your passkey: the screen lock of this device or your security key.',
    passkeyCancelled: 'The passkey was not used. Try again, or sign in another way.',
    passkeyNoScript:
      'Your second step is a passkey, which needs JavaScript. Turn it on, or ask your administrator to reset your second factors.',
    passkeyErrors: {
      failed: 'That passkey could not be checked. Try again, or sign in another way.',
      locked: 'Too many failed attempts. Wait a while and try again later.',
      unknown: 'This passkey is not known here. Sign in with your password instead.',
    },
    mfaTitle: 'Two-step verification',
    mfaIntro: 'Open your authenticator app and enter the 6-digit code it shows for this account.',
    mfaCode: 'Code from the app',
    mfaSubmit: 'Verify',
    mfaUseRecovery: 'Use a recovery code instead',
    mfaUseApp: 'Use the code from the app instead',
    mfaUsePasskey: 'Use a passkey instead',
    recoveryTitle: 'Use a recovery code',
    recoveryIntro:
      'Enter one of the recovery codes you saved when you set up two-step verification. Each code works once.',
    recoveryCode: 'Recovery code',
    mfaErrors: {
      wrong: 'That code is not right. Check it and try again.',
      reused: 'That code was already used. Wait for the next code in the app and try again.',
      recoveryReused: 'That recovery code was already used. Each code works once.',
      locked: 'Too many wrong codes. Wait a while and try again later.',
      enrolWrong: 'That code is not right. Check that the time on your phone is correct and try again.',
    },
    enrolTitle: 'Set up two-step verification',
    enrolIntro: (client: string) =>
      `${client} asks for a second step when you sign in. Scan this QR code with an authenticator app (such as Google Authenticator, Microsoft Authenticator or 1Password).`,
    enrolQr: 'QR code to scan with an authenticator app',
    enrolSecret: 'Cannot scan it? Enter this key in the app:',
    enrolCode: 'Enter the 6-digit code the app shows',
    enrolSubmit: 'Turn on',
    codesTitle: 'Save your recovery codes',
    codesDone: 'Two-step verification is on.',
    codesIntro:
      'If you lose your phone, each of these codes signs you in once instead of the app. Keep them somewhere safe: they are shown only now.',
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
      offline_access: 'Stay signed in: keep access while you are away (offline access)',
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
    signedInAs: (who: string) => `Та ${who} бүртгэлээр нэвтэрсэн байна.`,
    switchAccount: 'Та биш үү? Өөр бүртгэлээр нэвтрэх',
    yourAccount: 'Таны бүртгэлээр:',
    onApi: (api: string) => `${api} дээр:`,
    scopeFallback: (name: string) => {
      const m = /^([a-z]+)[:._-](.+)$/i.exec(name);
      const verbs: Record<string, string> = {
        read: 'унших',
        write: 'өөрчлөх',
        update: 'өөрчлөх',
        create: 'үүсгэх',
        delete: 'устгах',
        manage: 'удирдах',
      };
      const verb = m ? verbs[m[1].toLowerCase()] : undefined;
      return verb ? `${m![2].replace(/[_:.-]+/g, ' ')}: ${verb}` : `“${name}” эрхийг ашиглах`;
    },
    forgot: 'Нууц үгээ мартсан уу?',
    forgotTitle: 'Нууц үг сэргээх',
    forgotIntro: 'Бүртгэлийнхээ и-мэйл хаягийг оруулна уу. Шинэ нууц үг сонгох холбоос илгээнэ.',
    forgotSubmit: 'Холбоос илгээх',
    forgotSent:
      'Ийм хаягтай бүртгэл байвал шинэ нууц үг сонгох холбоос илгээгдлээ. Нэг удаа, нэг цагийн турш хүчинтэй.',
    forgotBadEmail: 'И-мэйл хаяг оруулна уу, жишээ нь name@example.com.',
    backToSignIn: 'Нэвтрэх хуудас руу буцах',
    signupSent: (email: string) =>
      `И-мэйлээ шалгана уу: ${email} хаяг руу захидал илгээлээ. Бүртгэл шинэ бол сонгосон нууц үгээрээ доор нэвтэрнэ үү.`,
    signupPhoneDone:
      'Энэ утасны дугаарыг ашиглах боломжтой бол таны бүртгэл бэлэн боллоо: нууц үгээрээ доор нэвтэрнэ үү.',
    passwordRules: 'Нууц үгийн шаардлага:',
    signupErrors: {
      none: 'И-мэйл хаяг эсвэл утасны дугаар оруулна уу.',
      email: 'Энэ и-мэйл хаяг биш байна. Шалгана уу, жишээ нь name@example.com.',
      phone: 'Утасны дугаараа улсын кодтой нь оруулна уу, жишээ нь +97699112233.',
      password: 'Доорх шаардлагыг хангасан нууц үг сонгоно уу.',
      passwordMissing: 'Нууц үг сонгоно уу.',
      tooMany: 'Эндээс хэт олон бүртгэл үүсгэлээ. Дараа дахин оролдоно уу.',
    },
    problem: 'Дараахыг засна уу:',
    minLength: (n: number) => `Хамгийн багадаа ${n} тэмдэгт`,
    maxLength: (n: number) => `Хамгийн ихдээ ${n} тэмдэгт`,
    deviceCancelled: 'Та цуцаллаа. Юу ч холбогдоогүй; энэ хуудсыг хааж болно.',
    signOutOf: (client: string) => `Гарах програм: ${client}`,
    signOutAccount: (who: string) => `Бүртгэл: ${who}`,
    continue: 'Үргэлжлүүлэх',
    otpBadUsername: 'И-мэйл хаяг эсвэл утасны дугаар (+976...) оруулна уу.',
    pageErrors: {
      notFound: 'Ийм хуудас байхгүй байна.',
      method: 'Энэ хуудсыг ийм байдлаар ашиглах боломжгүй.',
      expired: 'Энэ нэвтрэх хүсэлтийн хугацаа дууссан эсвэл танигдаагүй байна.',
      cannotContinue: 'Энэ хүсэлтийг энд үргэлжлүүлэх боломжгүй.',
      noCodes: 'Энэ програм кодоор нэвтрэхийг зөвшөөрдөггүй.',
      noSignup: 'Энэ програм бүртгэл үүсгэхийг зөвшөөрдөггүй.',
      csrf: 'Маягтыг баталгаажуулж чадсангүй. Буцаад дахин оролдоно уу.',
      noSignIn: 'Энд нэвтрэх шаардлагагүй.',
      noConsent: 'Энд зөвшөөрөл өгөх шаардлагагүй.',
      unknownApp: 'Энэ хүсэлтийн програм танигдаагүй байна.',
      badForm: 'Маягтыг уншиж чадсангүй. Буцаад дахин оролдоно уу.',
    },
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
    passkeySignIn: 'Passkey-ээр нэвтрэх',
    passkeyOr: 'эсвэл',
    passkeyMfa: 'Passkey ашиглах',
    passkeyMfaIntro: 'Эсвэл энэ төхөөрөмжид хадгалсан passkey эсвэл аюулгүйн түлхүүрээр баталгаажуулна уу.',
    passkeyOnlyIntro:
      'Passkey-ээрээ өөрийгөө баталгаажуулна уу: энэ төхөөрөмжийн дэлгэцийн түгжээ эсвэл аюулгүйн түлхүүр.',
    passkeyCancelled: 'Passkey ашиглагдсангүй. Дахин оролдох эсвэл өөр аргаар нэвтэрнэ үү.',
    passkeyNoScript:
      'Таны хоёр дахь алхам нь passkey бөгөөд JavaScript шаарддаг. Үүнийг асаах эсвэл админаасаа хоёр дахь хүчин зүйлсээ шинэчлүүлэхийг хүснэ үү.',
    passkeyErrors: {
      failed: 'Энэ passkey-г шалгаж чадсангүй. Дахин оролдох эсвэл өөр аргаар нэвтэрнэ үү.',
      locked: 'Хэт олон удаа амжилтгүй оролдлоо. Хэсэг хүлээгээд дараа дахин оролдоно уу.',
      unknown: 'Энэ passkey энд танигдаагүй байна. Оронд нь нууц үгээрээ нэвтэрнэ үү.',
    },
    mfaTitle: 'Хоёр алхамт баталгаажуулалт',
    mfaIntro: 'Баталгаажуулах апп-аа нээж, энэ бүртгэлд харуулж буй 6 оронтой кодыг оруулна уу.',
    mfaCode: 'Апп дахь код',
    mfaSubmit: 'Баталгаажуулах',
    mfaUseRecovery: 'Оронд нь сэргээх код ашиглах',
    mfaUseApp: 'Оронд нь апп дахь кодыг ашиглах',
    mfaUsePasskey: 'Оронд нь passkey ашиглах',
    recoveryTitle: 'Сэргээх код ашиглах',
    recoveryIntro:
      'Хоёр алхамт баталгаажуулалтыг тохируулахдаа хадгалсан сэргээх кодуудынхаа нэгийг оруулна уу. Код бүр нэг удаа ажиллана.',
    recoveryCode: 'Сэргээх код',
    mfaErrors: {
      wrong: 'Код буруу байна. Шалгаад дахин оролдоно уу.',
      reused: 'Энэ кодыг аль хэдийн ашигласан байна. Апп-ын дараагийн кодыг хүлээгээд дахин оролдоно уу.',
      recoveryReused: 'Энэ сэргээх кодыг аль хэдийн ашигласан байна. Код бүр нэг удаа ажиллана.',
      locked: 'Хэт олон удаа буруу код оруулсан байна. Хэсэг хүлээгээд дараа дахин оролдоно уу.',
      enrolWrong: 'Код буруу байна. Утасныхаа цаг зөв эсэхийг шалгаад дахин оролдоно уу.',
    },
    enrolTitle: 'Хоёр алхамт баталгаажуулалт тохируулах',
    enrolIntro: (client: string) =>
      `${client} нэвтрэх үед хоёр дахь алхам шаарддаг. Энэ QR кодыг баталгаажуулах апп-аар (Google Authenticator, Microsoft Authenticator, 1Password гэх мэт) уншуулна уу.`,
    enrolQr: 'Баталгаажуулах апп-аар уншуулах QR код',
    enrolSecret: 'Уншуулж чадахгүй байна уу? Энэ түлхүүрийг апп-д оруулна уу:',
    enrolCode: 'Апп-ын харуулж буй 6 оронтой кодыг оруулна уу',
    enrolSubmit: 'Идэвхжүүлэх',
    codesTitle: 'Сэргээх кодуудаа хадгална уу',
    codesDone: 'Хоёр алхамт баталгаажуулалт идэвхжлээ.',
    codesIntro:
      'Утсаа алдвал эдгээр код бүрээр апп-ын оронд нэг удаа нэвтэрч болно. Аюулгүй газар хадгална уу: зөвхөн одоо харуулна.',
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
      offline_access: 'Нэвтэрсэн хэвээр байх: таныг байхгүй үед ч хандах (офлайн хандалт)',
    } as Record<string, string>,
  },
} as const;

export type LoginFailureText = 'invalid' | 'blocked';

/** Why an interaction page cannot go on, said in the page's language (never a library's message). */
export type PageError = keyof (typeof TEXT)['en']['pageErrors'];

/** The sentence of a PageError in `locale`. */
export const pageErrorText = (locale: Locale, error: PageError): string => TEXT[locale].pageErrors[error];

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
padding:.75rem;border-radius:.25rem}ul{padding-left:1.25rem}.notice{background:#e8f0fe;border:1px solid #0b57d0;
padding:.75rem;border-radius:.25rem}.hint{font-size:.9rem;color:#444;margin:.25rem 0 0}.field-error{color:#b3261e;
font-size:.9rem;margin:.25rem 0 0}.who{display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline;margin:1.5rem 0 0;padding-top:1rem;
border-top:1px solid #ddd}.who p,.who form{margin:0}.nowrap{white-space:nowrap}
a.button{display:inline-block;padding:.6rem 1.2rem;border-radius:.25rem;background:#0b57d0;color:#fff;
text-decoration:none}button.link{background:none;border:none;color:#0b57d0;padding:0;margin:0;text-decoration:underline;font-size:1rem}
h2{font-size:1rem;margin:1rem 0 .25rem}h2.section{font-size:1.15rem;margin:2rem 0 .5rem;padding-top:1.25rem;
border-top:1px solid #ddd}.qr{display:block;width:12rem;height:12rem;margin:1rem auto}
.secret{font-family:ui-monospace,monospace;font-size:1rem;letter-spacing:.03em}
ul.codes{list-style:none;padding:0;display:grid;grid-template-columns:1fr 1fr;gap:.4rem 1rem;
font-family:ui-monospace,monospace;font-size:.95rem}ul.codes li{white-space:nowrap}ul.sessions li{margin-bottom:.75rem}.nowrap{white-space:nowrap}.actions{display:flex;flex-wrap:wrap;column-gap:.5rem}.actions button.secondary{margin-left:0}form.inline{display:inline}
[hidden]{display:none!important}button.wide{width:100%;margin-left:0}ul.passkeys{list-style:none;padding:0}
ul.passkeys li{border-top:1px solid #ddd;padding:.75rem 0}ul.passkeys li:last-child{border-bottom:1px solid #ddd}
.row{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap;margin-top:.5rem}.row input{flex:1 1 6rem;width:auto;min-width:0}
.row button,.row button.secondary{margin:0}ul.passkeys .hint{margin:.15rem 0 0}p.or{display:flex;align-items:center;gap:.75rem;color:#555;margin:1.5rem 0 0}
p.or::before,p.or::after{content:"";flex:1;border-top:1px solid #ddd}.passkey-alert{margin:1rem 0 0}`;

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

/** The passkey pages' script element (PASSKEY_SCRIPT_PATH, with the page's nonce; a module runs once parsed). */
export const passkeyScriptTag = (nonce: string) =>
  `\n<script type="module" src="${PASSKEY_SCRIPT_PATH}" nonce="${escapeHtml(nonce)}"></script>`;

export type PasskeyError = keyof (typeof TEXT)['en']['passkeyErrors'];

/**
 * A WebAuthn ceremony's form: hidden until the script finds WebAuthn in the browser (without script it is never
 * shown, every other form works). The script asks `optionsUrl` for the ceremony's options (a POST of the form's
 * fields, `optionsAction` as `action` when given), runs it, puts the browser's answer in `credential` and submits
 * the form. `errorId`: the alert the script shows when the browser's ceremony failed or was cancelled.
 */
export function passkeyForm(o: {
  kind: 'authenticate' | 'register';
  action: string;
  optionsUrl: string;
  optionsAction?: string;
  csrf: string;
  id: string;
  errorId: string;
  /** More fields, already HTML. */
  fields?: string;
  /** The form's alert (shown by the script or by the server), already HTML, just above the button. */
  alert?: string;
  button: string;
  buttonClass?: string;
}): string {
  return `<form method="post" action="${escapeHtml(o.action)}" id="${o.id}" data-passkey="${o.kind}" data-options="${escapeHtml(o.optionsUrl)}"${o.optionsAction ? ` data-options-action="${escapeHtml(o.optionsAction)}"` : ''} data-error="${o.errorId}" hidden>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<input type="hidden" name="credential" value="">${o.fields ?? ''}${o.alert ? `\n${o.alert}` : ''}
<button type="submit"${o.buttonClass ? ` class="${o.buttonClass}"` : ''}>${escapeHtml(o.button)}</button>
</form>`;
}

/** The alert a passkey form's script shows (hidden until then) or the server's refusal (shown). */
function passkeyAlert(t: (typeof TEXT)[Locale], id: string, error: PasskeyError | undefined): string {
  return hiddenAlert(id, error ? t.passkeyErrors[error] : t.passkeyCancelled, !error);
}

/** An alert box, hidden until a script shows it (`hidden`), else shown. */
export const hiddenAlert = (id: string, text: string, hidden: boolean, exists?: string) =>
  `<p class="alert passkey-alert" role="alert" id="${id}"${exists ? ` data-exists="${escapeHtml(exists)}"` : ''}${hidden ? ' hidden' : ''}>${escapeHtml(text)}</p>`;

export interface LoginPageInput {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  clientName: string;
  username?: string;
  error?: LoginFailureText;
  /** A neutral status shown above the form (after a sign-up). */
  notice?: { kind: 'signupSent'; email: string } | { kind: 'signupPhoneDone' };
  /** The sign-up page, when the client allows sign-up. */
  signupHref?: string;
  /** The one-time code page, when the client may use codes. */
  otpHref?: string;
  /** The "forgot password" page. */
  forgotHref?: string;
  /** Passwordless sign-in with a passkey: the form's action and the options' URL. */
  passkey?: { action: string; optionsUrl: string; error?: PasskeyError };
}

export function loginPage(o: LoginPageInput): string {
  const t = TEXT[o.locale];
  const error = o.error ? `<p class="alert" role="alert" id="login-error">${escapeHtml(t[o.error])}</p>` : '';
  const notice = o.notice
    ? `<p class="notice" role="status" id="login-notice">${escapeHtml(
        o.notice.kind === 'signupSent' ? t.signupSent(o.notice.email) : t.signupPhoneDone,
      )}</p>`
    : '';
  const describedBy = o.error ? ' aria-describedby="login-error"' : '';
  // with the user name known (a failed attempt, a sign-up), the password is what is left to type: focus there
  const focusPassword = !!o.username;
  return layout(
    o.locale,
    t.signIn,
    o.nonce,
    `<h1>${escapeHtml(t.signIn)}</h1>
<p>${escapeHtml(t.signInTo(o.clientName))}</p>
${error}${notice}
<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="username">${escapeHtml(t.username)}</label>
<input id="username" name="username" type="text" autocomplete="username" required${focusPassword ? '' : ' autofocus'} value="${escapeHtml(o.username ?? '')}"${describedBy}>
<label for="password">${escapeHtml(t.password)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${focusPassword ? ' autofocus' : ''}${describedBy}>
<button type="submit">${escapeHtml(t.submit)}</button>
</form>${
      o.passkey
        ? `\n${passkeyForm({
            kind: 'authenticate',
            action: o.passkey.action,
            optionsUrl: o.passkey.optionsUrl,
            csrf: o.csrf,
            id: 'passkey-signin',
            errorId: 'passkey-error',
            fields: `\n<p class="or"><span>${escapeHtml(t.passkeyOr)}</span></p>`,
            alert: passkeyAlert(t, 'passkey-error', o.passkey.error),
            button: t.passkeySignIn,
            buttonClass: 'secondary wide',
          })}`
        : ''
    }${o.forgotHref ? `\n<p><a href="${escapeHtml(o.forgotHref)}" id="forgot">${escapeHtml(t.forgot)}</a></p>` : ''}${o.otpHref ? `\n<p><a href="${escapeHtml(o.otpHref)}">${escapeHtml(t.otpLink)}</a></p>` : ''}${o.signupHref ? `\n<p><a href="${escapeHtml(o.signupHref)}">${escapeHtml(t.signUp)}</a></p>` : ''}${o.passkey ? passkeyScriptTag(o.nonce) : ''}`,
  );
}

/** "Forgot password?": the e-mail form, then (sent) the same answer whether or not an account has the address. */
export function forgotPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  loginHref: string;
  sent?: boolean;
  error?: 'badEmail';
  email?: string;
}): string {
  const t = TEXT[o.locale];
  const body = o.sent
    ? `<p class="notice" role="status" id="forgot-sent">${escapeHtml(t.forgotSent)}</p>`
    : `<p>${escapeHtml(t.forgotIntro)}</p>
${o.error ? `<p class="alert" role="alert" id="forgot-error">${escapeHtml(t.forgotBadEmail)}</p>` : ''}
<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="email">${escapeHtml(t.email)}</label>
<input id="email" name="email" type="email" autocomplete="email" required autofocus value="${escapeHtml(o.email ?? '')}"${o.error ? ' aria-describedby="forgot-error"' : ''}>
<button type="submit">${escapeHtml(t.forgotSubmit)}</button>
</form>`;
  return layout(
    o.locale,
    t.forgotTitle,
    o.nonce,
    `<h1>${escapeHtml(t.forgotTitle)}</h1>
${body}
<p><a href="${escapeHtml(o.loginHref)}">${escapeHtml(t.backToSignIn)}</a></p>`,
  );
}

/** One rule of an instance's password_validators, as the pages state it. */
export interface PasswordRule {
  validator?: string;
  description?: string;
  rules?: string;
  regex?: string;
  order?: number;
}

/**
 * The password rules in the page's language: a length rule (`{n,}` / `{0,n}` quantifier) in our own words, any
 * other rule by the description its administrator wrote (else its name).
 */
export function passwordRuleTexts(locale: Locale, validators: readonly PasswordRule[] | undefined): string[] {
  const t = TEXT[locale];
  return [...(validators ?? [])]
    .sort((a, b) => (a.order ?? 0) - (b.order ?? 0))
    .map((v) => {
      const source = v.rules ?? v.regex ?? '';
      const min = /^\^?(?:\.|\[\\s\\S\]|\[\\S\\s\])\{(\d+),\}\$?$/.exec(source);
      if (min) return t.minLength(Number(min[1]));
      const max = /^\^?(?:\.|\[\\s\\S\]|\[\\S\\s\])\{0?,(\d+)\}\$$/.exec(source);
      if (max) return t.maxLength(Number(max[1]));
      return v.description ?? v.validator ?? source;
    })
    .filter(Boolean);
}

/** The rules of `validators` that `password` fails, in the page's language (a too long password: that rule too). */
export function failedPasswordRules(
  locale: Locale,
  validators: readonly PasswordRule[] | undefined,
  password: string,
): string[] {
  const failed = (validators ?? []).filter((v) => checkPasswordPolicy([v], password).length > 0);
  const texts = passwordRuleTexts(locale, failed);
  return password.length > MAX_PASSWORD_LENGTH
    ? [TEXT[locale].maxLength(MAX_PASSWORD_LENGTH), ...texts]
    : texts;
}

export type SignupField = 'email' | 'phone' | 'password';
export type SignupProblem = keyof (typeof TEXT)['en']['signupErrors'];

/**
 * Sign-up: `email` or `phone`, `password`, `name`. The password rules are shown under the password field from the
 * start; a problem is said in a sentence beside its field (and once above the form, for screen readers).
 */
export function signupPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  rules: string[];
  problems?: { field?: SignupField; problem: SignupProblem }[];
  values?: { email?: string; phone?: string; name?: string };
}): string {
  const t = TEXT[o.locale];
  const v = o.values ?? {};
  const problems = o.problems ?? [];
  const summary = problems.length
    ? `<div class="alert" role="alert" id="signup-error"><p>${escapeHtml(t.problem)}</p><ul>${problems
        .map((p) => `<li>${escapeHtml(t.signupErrors[p.problem])}</li>`)
        .join('')}</ul></div>`
    : '';
  const fieldError = (field: SignupField) => {
    const p = problems.find((x) => x.field === field);
    return p
      ? `\n<p class="field-error" id="${field}-error">${escapeHtml(t.signupErrors[p.problem])}</p>`
      : '';
  };
  const described = (field: SignupField, more: string[] = []) => {
    const ids = [...(problems.some((x) => x.field === field) ? [`${field}-error`] : []), ...more];
    return ids.length ? ` aria-describedby="${ids.join(' ')}"` : '';
  };
  const invalid = (field: SignupField) =>
    problems.some((x) => x.field === field) ? ' aria-invalid="true"' : '';
  const rules = o.rules.length
    ? `\n<div class="hint" id="password-rules"><p>${escapeHtml(t.passwordRules)}</p><ul>${o.rules
        .map((r) => `<li>${escapeHtml(r)}</li>`)
        .join('')}</ul></div>`
    : '';
  return layout(
    o.locale,
    t.signUp,
    o.nonce,
    `<h1>${escapeHtml(t.signUp)}</h1>
<p>${escapeHtml(t.emailOrPhone)}</p>
${summary}
<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="email">${escapeHtml(t.email)}</label>
<input id="email" name="email" type="email" autocomplete="email" value="${escapeHtml(v.email ?? '')}"${described('email')}${invalid('email')}>${fieldError('email')}
<label for="phone">${escapeHtml(t.phone)}</label>
<input id="phone" name="phone" type="tel" autocomplete="tel" value="${escapeHtml(v.phone ?? '')}"${described('phone')}${invalid('phone')}>${fieldError('phone')}
<label for="name">${escapeHtml(t.name)}</label>
<input id="name" name="name" type="text" autocomplete="name" value="${escapeHtml(v.name ?? '')}">
<label for="password">${escapeHtml(t.password)}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required${described('password', o.rules.length ? ['password-rules'] : [])}${invalid('password')}>${fieldError('password')}${rules}
<button type="submit">${escapeHtml(t.signUpSubmit)}</button>
</form>`,
  );
}

/** A one-message page (e-mail verification), with a way on when there is one. */
export function messagePage(o: {
  locale: Locale;
  nonce: string;
  message: 'verified' | 'verifyFailed';
  /** Where "Continue" leads (the application). */
  continueHref?: string;
}): string {
  const t = TEXT[o.locale];
  const next = o.continueHref
    ? `\n<p><a class="button" id="continue" href="${escapeHtml(o.continueHref)}">${escapeHtml(t.continue)}</a></p>`
    : '';
  return layout(
    o.locale,
    t.email,
    o.nonce,
    `<h1>${escapeHtml(t.email)}</h1>\n<p role="status">${escapeHtml(t[o.message])}</p>${next}`,
  );
}

/** The recovery codes of a new set, shown once (the sign-in's enrolment, the account page). */
export function recoveryCodesList(codes: readonly string[]): string {
  return `<ul class="codes" id="recovery-codes">
${codes.map((c) => `<li><code>${escapeHtml(c)}</code></li>`).join('\n')}
</ul>`;
}

/** How the pages name an account: its e-mail, else its user name, else its phone number. */
export function accountLabel(user: {
  userEmail?: string | null;
  userName?: string | null;
  phoneNumber?: string | null;
}): string | undefined {
  return user.userEmail ?? user.userName ?? user.phoneNumber ?? undefined;
}

export interface ConsentScope {
  name: string;
  description?: string | null;
}

export interface ConsentPageInput {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  clientName: string;
  /** The signed-in account, as accountLabel names it. */
  account?: string;
  /** The "Not you? Switch account" form's action. */
  switchAction: string;
  /** OIDC scopes (described by us). */
  scopes: ConsentScope[];
  /** Per API (resource name): the scopes the tokens will carry (described by the resource, else in words). */
  apis: { name: string; scopes: ConsentScope[] }[];
}

export function consentPage(o: ConsentPageInput): string {
  const t = TEXT[o.locale];
  const item = (s: ConsentScope, ours: boolean) => {
    const description =
      s.description?.trim() || (ours ? t.scopes[s.name] : undefined) || t.scopeFallback(s.name);
    return `<li data-scope="${escapeHtml(s.name)}">${escapeHtml(description)}</li>`;
  };
  const lists: string[] = [];
  if (o.scopes.length) {
    lists.push(`<h2 id="scopes-account">${escapeHtml(t.yourAccount)}</h2>
<ul aria-labelledby="scopes-account">
${o.scopes.map((s) => item(s, true)).join('\n')}
</ul>`);
  }
  o.apis.forEach((api, i) => {
    if (!api.scopes.length) return;
    lists.push(`<h2 id="scopes-api-${i}" class="api">${escapeHtml(t.onApi(api.name))}</h2>
<ul aria-labelledby="scopes-api-${i}">
${api.scopes.map((s) => item(s, false)).join('\n')}
</ul>`);
  });
  // after the decision's form: the page's first form stays the decision (what scripts and agents submit)
  const who = o.account
    ? `<div class="who"><p id="signed-in-as">${escapeHtml(t.signedInAs(o.account))}</p>
<form method="post" action="${escapeHtml(o.switchAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<button type="submit" class="link" id="switch-account">${escapeHtml(t.switchAccount)}</button>
</form></div>`
    : '';
  return layout(
    o.locale,
    t.consent,
    o.nonce,
    `<h1>${escapeHtml(t.consent)}</h1>
<p>${escapeHtml(t.consentTo(o.clientName))}</p>
<p id="scopes-intro">${escapeHtml(t.scopesIntro)}</p>
${lists.join('\n')}
<form method="post" action="${escapeHtml(o.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<button type="submit" name="decision" value="allow">${escapeHtml(t.allow)}</button>
<button type="submit" name="decision" value="deny" class="secondary">${escapeHtml(t.deny)}</button>
</form>
${who}`,
  );
}

export function errorPage(o: { locale: Locale; nonce: string; message: string; details?: string[] }): string {
  const t = TEXT[o.locale];
  // the error code and reference below the sentence, each unbroken: someone reads them out to support or copies them
  const details = o.details?.length
    ? `\n<p id="error-reference">${o.details.map((d) => `<span class="nowrap">${escapeHtml(d)}</span>`).join(' · ')}</p>`
    : '';
  return layout(
    o.locale,
    t.errorTitle,
    o.nonce,
    `<h1>${escapeHtml(t.errorTitle)}</h1>
<p class="alert" role="alert">${escapeHtml(o.message)}</p>${details}
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
export function logoutPage(o: {
  locale: Locale;
  nonce: string;
  form: string;
  /** The application asking (from id_token_hint or client_id), when known. */
  clientName?: string;
  /** The account being signed out, when signed in. */
  account?: string;
}): string {
  const t = TEXT[o.locale];
  const formId = /id="([^"]+)"/.exec(o.form)?.[1] ?? 'op.logoutForm';
  const of = o.clientName ? `\n<p id="logout-client">${escapeHtml(t.signOutOf(o.clientName))}</p>` : '';
  const who = o.account ? `\n<p id="logout-account">${escapeHtml(t.signOutAccount(o.account))}</p>` : '';
  return layout(
    o.locale,
    t.signOut,
    o.nonce,
    `<h1>${escapeHtml(t.signOut)}</h1>${of}${who}
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
  error?: 'wrong' | 'failed' | 'cancelled';
}): string {
  const t = TEXT[o.locale];
  const f = providerForm(o.form);
  // a deliberate cancel is a neutral status, not an alert
  const error =
    o.error === 'cancelled'
      ? `<p class="notice" role="status" id="code-error">${escapeHtml(t.deviceCancelled)}</p>`
      : o.error
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
    ? `<p class="alert" role="alert" id="otp-error">${escapeHtml(o.error === 'wrong' ? t.otpWrong : o.error === 'badUsername' ? t.otpBadUsername : o.error)}</p>`
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

/**
 * Where "Continue" leads after a page that ends outside a sign-in (the e-mail verified page): the client's
 * `urls.initiate_login_uri` (OIDC's third-party initiated login endpoint: the application starts a sign-in), else
 * the origin of its first callback (the application's own site), else nowhere (no button). Only http(s) URLs.
 */
export function continueUrlOf(metadata: { urls?: Record<string, unknown> } | undefined): string | undefined {
  const urls = metadata?.urls ?? {};
  const web = (v: unknown) => {
    try {
      const u = typeof v === 'string' ? new URL(v) : undefined;
      return u && (u.protocol === 'https:' || u.protocol === 'http:') ? u : undefined;
    } catch {
      return undefined;
    }
  };
  const initiate = web(urls.initiate_login_uri);
  if (initiate) return initiate.toString();
  const callbacks = Array.isArray(urls.callbacks) ? urls.callbacks : [];
  const first = web(callbacks[0]);
  return first ? `${first.origin}/` : undefined;
}

export type MfaError = keyof (typeof TEXT)['en']['mfaErrors'];

function mfaAlert(t: (typeof TEXT)[Locale], error: MfaError | undefined): string {
  return error ? `<p class="alert" role="alert" id="mfa-error">${escapeHtml(t.mfaErrors[error])}</p>\n` : '';
}

/**
 * The second step of a sign-in: the code of the authenticator app (`otp`), or one recovery code
 * (`recovery_code`), with a link to the other form.
 */
export function mfaPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  /** The recovery-code form instead of the app's code. */
  recovery: boolean;
  /** The other form's page. */
  switchHref: string;
  error?: MfaError;
  /** The user has an authenticator app (else the page offers only the passkey, and recovery codes). */
  app?: boolean;
  /** A passkey as the second factor: the form's action and the options' URL. */
  passkey?: { action: string; optionsUrl: string; error?: PasskeyError };
}): string {
  const t = TEXT[o.locale];
  const described = o.error ? ' aria-describedby="mfa-error"' : '';
  const title = o.recovery ? t.recoveryTitle : t.mfaTitle;
  const only = o.app === false;
  const passkey =
    o.passkey && !o.recovery
      ? `\n${only ? '' : `<h2 class="section" id="passkey-heading">${escapeHtml(t.passkeyMfa)}</h2>\n`}<p>${escapeHtml(only ? t.passkeyOnlyIntro : t.passkeyMfaIntro)}</p>
${passkeyForm({
  kind: 'authenticate',
  alert: passkeyAlert(t, 'passkey-error', o.passkey.error),
  action: o.passkey.action,
  optionsUrl: o.passkey.optionsUrl,
  csrf: o.csrf,
  id: 'passkey-mfa',
  errorId: 'passkey-error',
  button: t.passkeyMfa,
})}${passkeyScriptTag(o.nonce)}`
      : '';
  if (o.app === false && !o.recovery) {
    return layout(
      o.locale,
      title,
      o.nonce,
      `<h1>${escapeHtml(title)}</h1>${passkey}
<noscript><p class="alert">${escapeHtml(t.passkeyNoScript)}</p></noscript>`,
    );
  }
  const field = o.recovery
    ? `<label for="recovery_code">${escapeHtml(t.recoveryCode)}</label>
<input id="recovery_code" name="recovery_code" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" required autofocus${described}>`
    : `<label for="otp">${escapeHtml(t.mfaCode)}</label>
<input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus${described}>`;
  return layout(
    o.locale,
    title,
    o.nonce,
    `<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(o.recovery ? t.recoveryIntro : t.mfaIntro)}</p>
${mfaAlert(t, o.error)}<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
${field}
<button type="submit">${escapeHtml(t.mfaSubmit)}</button>
</form>
<p><a href="${escapeHtml(o.switchHref)}" id="mfa-switch">${escapeHtml(o.recovery ? (o.app === false ? t.mfaUsePasskey : t.mfaUseApp) : t.mfaUseRecovery)}</a></p>${passkey}`,
  );
}

/** The secret as shown for typing: groups of four. */
export const groupedSecret = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

/**
 * Enrolment of an authenticator app at sign-in: the QR code (an inline SVG drawn on the server: no script, no
 * image request), the secret as text, and the field for the app's first code.
 */
export function enrolPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  clientName: string;
  /** The QR code of the otpauth:// URI, as SVG markup (qrcode's output, no script in it). */
  qrSvg: string;
  secret: string;
  error?: MfaError;
}): string {
  const t = TEXT[o.locale];
  const described = o.error ? ' aria-describedby="mfa-error"' : '';
  const svg = o.qrSvg.replace('<svg ', `<svg class="qr" role="img" aria-label="${escapeHtml(t.enrolQr)}" `);
  return layout(
    o.locale,
    t.enrolTitle,
    o.nonce,
    `<h1>${escapeHtml(t.enrolTitle)}</h1>
<p>${escapeHtml(t.enrolIntro(o.clientName))}</p>
${svg}
<p>${escapeHtml(t.enrolSecret)}<br><code class="secret" id="totp-secret">${escapeHtml(groupedSecret(o.secret))}</code></p>
${mfaAlert(t, o.error)}<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="otp">${escapeHtml(t.enrolCode)}</label>
<input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus${described}>
<button type="submit">${escapeHtml(t.enrolSubmit)}</button>
</form>`,
  );
}

/** The recovery codes of a new enrolment, shown once, and the way on to the application. */
export function recoveryCodesPage(o: {
  locale: Locale;
  nonce: string;
  codes: readonly string[];
  continueHref: string;
}): string {
  const t = TEXT[o.locale];
  return layout(
    o.locale,
    t.codesTitle,
    o.nonce,
    `<h1>${escapeHtml(t.codesTitle)}</h1>
<p class="notice" role="status">${escapeHtml(t.codesDone)}</p>
<p>${escapeHtml(t.codesIntro)}</p>
${recoveryCodesList(o.codes)}
<p><a class="button" id="continue" href="${escapeHtml(o.continueHref)}">${escapeHtml(t.continue)}</a></p>`,
  );
}
