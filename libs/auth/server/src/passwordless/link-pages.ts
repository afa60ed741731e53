/**
 * The page a passwordless sign-in link opens: it asks the person to continue as the link's (masked) account with a
 * button, so that opening the link (a mail scanner, a link planted by someone else) signs nobody in. In the style
 * of the interaction pages: no script, every value escaped, English and Mongolian.
 */
import { escapeHtml, layout, type Locale } from '../interaction/pages.js';

const TEXT = {
  en: {
    title: 'Sign in',
    intro: (client: string) => `You opened a sign-in link for ${client}.`,
    question: (who: string) => `Continue as ${who}?`,
    submit: 'Continue',
    notYou: 'If you did not ask for this link, close this page: nothing happens.',
  },
  mn: {
    title: 'Нэвтрэх',
    intro: (client: string) => `Та ${client} руу нэвтрэх холбоос нээлээ.`,
    question: (who: string) => `${who} хаягаар үргэлжлүүлэх үү?`,
    submit: 'Үргэлжлүүлэх',
    notYou: 'Хэрэв та энэ холбоосыг хүсээгүй бол энэ хуудсыг хаана уу: юу ч өөрчлөгдөхгүй.',
  },
} as const;

/**
 * An e-mail address as the confirmation page shows it: the first character of the local part, `***`, and the
 * domain (`j***@example.com`); the person recognises the account, someone who only sees the page learns little.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  return `${Array.from(email.slice(0, at))[0]}***${email.slice(at)}`;
}

/** "Continue as j***@example.com?": a form POSTing the link's token with the CSRF token of the page's cookie. */
export function linkConfirmPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  token: string;
  who: string;
  clientName: string;
}): string {
  const t = TEXT[o.locale];
  return layout(
    o.locale,
    t.title,
    o.nonce,
    `<h1>${escapeHtml(t.title)}</h1>
<p>${escapeHtml(t.intro(o.clientName))}</p>
<p id="continue-as"><strong>${escapeHtml(t.question(o.who))}</strong></p>
<form method="post" action="${escapeHtml(o.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<input type="hidden" name="token" value="${escapeHtml(o.token)}">
<button type="submit" aria-describedby="continue-as">${escapeHtml(t.submit)}</button>
</form>
<p>${escapeHtml(t.notYou)}</p>`,
  );
}

const MESSAGES = {
  en: {
    title: 'Something went wrong',
    invalid:
      'This link is not valid any more: it was used, it expired or it is not known. Ask for a new one.',
    csrf: 'The form could not be verified. Open the link from your e-mail again.',
  },
  mn: {
    title: 'Алдаа гарлаа',
    invalid:
      'Энэ холбоос хүчингүй болсон байна: ашиглагдсан, хугацаа нь дууссан эсвэл танигдаагүй. Шинээр хүснэ үү.',
    csrf: 'Маягтыг баталгаажуулж чадсангүй. И-мэйл дэх холбоосыг дахин нээнэ үү.',
  },
} as const;

/** Why a link cannot go on (role="alert"). */
export function linkMessagePage(o: { locale: Locale; nonce: string; message: 'invalid' | 'csrf' }): string {
  const t = MESSAGES[o.locale];
  return layout(
    o.locale,
    t.title,
    o.nonce,
    `<h1>${escapeHtml(t.title)}</h1>\n<p class="alert" role="alert">${escapeHtml(t[o.message])}</p>`,
  );
}
