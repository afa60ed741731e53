/**
 * The pages of tickets (links the management API makes: password change, invitation, e-mail verification), in the
 * style of the interaction pages: no script, every value escaped, English and Mongolian.
 */
import { escapeHtml, layout, type Locale } from '../interaction/pages.js';

const TEXT = {
  en: {
    passwordTitle: 'Choose your password',
    passwordIntro: 'Choose a new password for your account.',
    passwordFor: (who: string) => `Account: ${who}`,
    password: 'New password',
    passwordSubmit: 'Set password',
    passwordRules: 'The password needs:',
    passwordRequired: 'A password is required',
    passwordSet: 'Your password is set. You can sign in with it now.',
    emailTitle: 'Verify your e-mail address',
    emailIntro: (email: string) => `Confirm that ${email} is your e-mail address.`,
    emailSubmit: 'Verify my e-mail',
    emailVerified: 'Your e-mail address is verified.',
    invalid:
      'This link is not valid any more: it was used, it expired or it is not known. Ask for a new one.',
    csrf: 'The form could not be verified. Open the link again.',
    errorTitle: 'Something went wrong',
  },
  mn: {
    passwordTitle: 'Нууц үгээ сонгоно уу',
    passwordIntro: 'Бүртгэлдээ шинэ нууц үг сонгоно уу.',
    passwordFor: (who: string) => `Бүртгэл: ${who}`,
    password: 'Шинэ нууц үг',
    passwordSubmit: 'Нууц үг тохируулах',
    passwordRules: 'Нууц үгийн шаардлага:',
    passwordRequired: 'Нууц үг оруулна уу',
    passwordSet: 'Таны нууц үг тохирууллаа. Одоо түүгээр нэвтэрч болно.',
    emailTitle: 'И-мэйл хаягаа баталгаажуулна уу',
    emailIntro: (email: string) => `${email} таны и-мэйл хаяг болохыг баталгаажуулна уу.`,
    emailSubmit: 'И-мэйлээ баталгаажуулах',
    emailVerified: 'Таны и-мэйл хаяг баталгаажлаа.',
    invalid:
      'Энэ холбоос хүчингүй болсон байна: ашиглагдсан, хугацаа нь дууссан эсвэл танигдаагүй. Шинээр хүснэ үү.',
    csrf: 'Маягтыг баталгаажуулж чадсангүй. Холбоосыг дахин нээнэ үү.',
    errorTitle: 'Алдаа гарлаа',
  },
} as const;

/** "A password is required", in the page's language. */
export const requiredText = (locale: Locale): string => TEXT[locale].passwordRequired;

/** The password form (field `password`), with the rules it failed when submitted before. */
export function passwordTicketPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  ticket: string;
  who: string | null;
  errors?: string[];
  /** The instance's password rules, shown before the first submit. */
  rules?: string[];
}): string {
  const t = TEXT[o.locale];
  const rules = o.rules?.length
    ? `\n<div class="hint" id="password-rules"><p>${escapeHtml(t.passwordRules)}</p><ul>${o.rules
        .map((r) => `<li>${escapeHtml(r)}</li>`)
        .join('')}</ul></div>`
    : '';
  const describedBy = [
    ...(o.errors?.length ? ['password-error'] : []),
    ...(o.rules?.length ? ['password-rules'] : []),
  ];
  const error = o.errors?.length
    ? `<div class="alert" role="alert" id="password-error"><ul>${o.errors.map((e) => `<li>${escapeHtml(e)}</li>`).join('')}</ul></div>`
    : '';
  return layout(
    o.locale,
    t.passwordTitle,
    o.nonce,
    `<h1>${escapeHtml(t.passwordTitle)}</h1>
<p>${escapeHtml(t.passwordIntro)}</p>${o.who ? `\n<p>${escapeHtml(t.passwordFor(o.who))}</p>` : ''}
${error}
<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<input type="hidden" name="ticket" value="${escapeHtml(o.ticket)}">
${o.who ? `<input type="hidden" name="username" autocomplete="username" value="${escapeHtml(o.who)}">\n` : ''}<label for="password">${escapeHtml(t.password)}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required autofocus${describedBy.length ? ` aria-describedby="${describedBy.join(' ')}"` : ''}>${rules}
<button type="submit">${escapeHtml(t.passwordSubmit)}</button>
</form>`,
  );
}

/** The e-mail verification confirmation (a button: a mail scanner fetching the link does not use it up). */
export function emailTicketPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  ticket: string;
  email: string;
}): string {
  const t = TEXT[o.locale];
  return layout(
    o.locale,
    t.emailTitle,
    o.nonce,
    `<h1>${escapeHtml(t.emailTitle)}</h1>
<p>${escapeHtml(t.emailIntro(o.email))}</p>
<form method="post" action="${escapeHtml(o.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<input type="hidden" name="ticket" value="${escapeHtml(o.ticket)}">
<button type="submit">${escapeHtml(t.emailSubmit)}</button>
</form>`,
  );
}

export type TicketMessage = 'passwordSet' | 'emailVerified' | 'invalid' | 'csrf';

/** The end of a ticket: success (role="status") or why it cannot go on (role="alert"). */
export function ticketMessagePage(o: { locale: Locale; nonce: string; message: TicketMessage }): string {
  const t = TEXT[o.locale];
  const ok = o.message === 'passwordSet' || o.message === 'emailVerified';
  const title = ok ? (o.message === 'passwordSet' ? t.passwordTitle : t.emailTitle) : t.errorTitle;
  return layout(
    o.locale,
    title,
    o.nonce,
    `<h1>${escapeHtml(title)}</h1>\n<p ${ok ? 'role="status"' : 'class="alert" role="alert"'}>${escapeHtml(t[o.message])}</p>`,
  );
}
