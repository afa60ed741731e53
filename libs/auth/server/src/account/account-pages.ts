/**
 * The account pages (`/account`): where a signed-in person manages their own account, in the style of the
 * sign-in pages: no script, every value escaped, English and Mongolian, errors in the page's alert box.
 */
import {
  escapeHtml,
  groupedSecret,
  hiddenAlert,
  layout,
  passkeyForm,
  passkeyScriptTag,
  recoveryCodesList,
  type Locale,
} from '../interaction/pages.js';

const TEXT = {
  en: {
    title: 'Your account',
    signedInAs: (who: string) => `Signed in as ${who}.`,
    profile: 'Profile',
    name: 'Name',
    nickname: 'Nickname',
    picture: 'Picture URL',
    locale: 'Language (for example en or mn-MN)',
    email: 'E-mail',
    emailVerified: 'verified',
    emailUnverified: 'not verified',
    noEmail: 'No e-mail address',
    saveProfile: 'Save profile',
    newEmail: 'New e-mail address',
    changeEmail: 'Change e-mail',
    emailNote: 'We send a link to the new address to verify it, and a notice to the old one.',
    password: 'Password',
    currentPassword: 'Current password',
    newPassword: 'New password',
    changePassword: 'Change password',
    passwordRules: 'The password needs:',
    passwordNote: 'Changing the password signs out your other sessions and applications.',
    phone: 'Phone',
    noPhone: 'No phone number',
    newPhone: 'New phone number, with + and the country code (for example +976 9911 2233)',
    sendPhoneCode: 'Send a code',
    phoneNote:
      'We send a 6-digit code to the number by text message. The number is saved once you enter the code.',
    phoneCodeSent: (to: string) => `We sent a 6-digit code to ${to}. It works for 5 minutes.`,
    phoneCode: 'The code in the text message',
    confirmPhone: 'Verify the number',
    cancelPhone: 'Use another number',
    removePhone: 'Remove the phone number',
    authenticators: 'Two-step verification',
    app: 'Authenticator app',
    appOn: (since: string) => `Authenticator app: on since ${since}.`,
    appOff: 'No authenticator app is set up.',
    recovery: (left: number) => `Recovery codes: ${left} left.`,
    noRecovery: 'No recovery codes.',
    removeApp: 'Remove the app',
    stepUp: 'Sign in again with the authenticator app',
    reauth: 'No password? Sign in again instead',
    regenerate: 'New recovery codes',
    sessions: 'Where you are signed in',
    sessionAt: (at: string) => `Signed in ${at} (UTC)`,
    sessionDevice: (browser: string | null, os: string | null) =>
      browser && os ? `${browser} on ${os}` : (browser ?? os ?? 'Unknown browser'),
    sessionSeen: (at: string, ip: string | null) =>
      ip ? `last active ${at} (UTC) from ${ip}` : `last active ${at} (UTC)`,
    thisBrowser: 'this browser',
    signOutSession: 'Sign out there',
    signOutOthers: 'Sign out all other sessions',
    signOutAll: 'Sign out everywhere',
    apps: 'Connected applications',
    noApps: 'No application has access to your account.',
    appSince: (name: string, at: string) => `${name}, since ${at}`,
    revoke: 'Remove access',
    enrol: 'Set up an authenticator app',
    enrolIntro:
      'Scan this QR code with an authenticator app (such as Google Authenticator, Microsoft Authenticator or 1Password).',
    enrolQr: 'QR code to scan with an authenticator app',
    enrolSecret: 'Cannot scan it? Enter this key in the app:',
    enrolCode: 'Enter the 6-digit code the app shows',
    enrolSubmit: 'Turn on',
    confirmPassword: 'Your password (not needed within 5 minutes of signing in)',
    codesTitle: 'Save your recovery codes',
    codesIntro:
      'If you lose your phone, each of these codes signs you in once instead of the app. Keep them somewhere safe: they are shown only now. Older codes no longer work.',
    back: 'Back to your account',
    signOut: 'Sign out',
    passkeys: 'Passkeys',
    passkeysIntro:
      'A passkey signs you in with the screen lock of this device or a security key, without a password. It also counts as the second step.',
    noPasskeys: 'No passkey is set up.',
    passkeyMeta: (created: string, used: string | null) =>
      `Added ${created} · ${used ? `last used ${used} (UTC)` : 'not used yet'}`,
    passkeyNewName: 'Name of the new passkey (for example “Work laptop”)',
    passkeyDefaultName: 'Passkey',
    addPasskey: 'Add a passkey',
    renamePasskey: 'Rename',
    renameLabel: (name: string) => `New name for “${name}”`,
    removePasskey: 'Remove',
    removeLabel: (name: string) => `Remove “${name}”`,
    passkeyRemovePassword: 'Your password, to remove a passkey (not needed within 5 minutes of signing in)',
    passkeyNoScript: 'Adding a passkey needs JavaScript and a browser that supports passkeys.',
    passkeyCancelled: 'The passkey was not added. Try again.',
    passkeyExists: 'This device or security key already holds a passkey for your account.',
    passkeyStepUp: 'Sign in again with a second step to change your passkeys',
    done: {
      profile: 'Your profile is saved.',
      email: 'Your e-mail address is changed. Open the link we sent to the new address to verify it.',
      password: 'Your password is changed. Your other sessions and applications are signed out.',
      removed: 'The authenticator app is removed. Two-step verification is off.',
      enrolled: 'Two-step verification is on.',
      sessionEnded: 'That session is signed out.',
      othersEnded: 'Your other sessions are signed out.',
      revoked: 'The application no longer has access to your account.',
      phone: 'Your phone number is verified and saved.',
      phoneRemoved: 'Your phone number is removed.',
      passkeyAdded: 'The passkey is added: you can sign in with it.',
      passkeyRenamed: 'The passkey is renamed.',
      passkeyRemoved: 'The passkey is removed.',
    },
    errors: {
      passkeyFailed: 'The passkey could not be added. Try again.',
      passkeyDuplicate: 'This passkey is already added to your account.',
      passkeyTooMany: 'You have the most passkeys allowed (20). Remove one first.',
      passkeyNotFound: 'That passkey is not there any more.',
      passkeyName: 'Give the passkey a name (at most 100 characters).',
      passkeyNeedMfa:
        'This session signed in without a second step. Sign in again with your passkey or app (link below) to change your passkeys.',
      nameLong: 'The name is too long (at most 200 characters).',
      nicknameLong: 'The nickname is too long (at most 200 characters).',
      control: 'Names cannot contain control characters.',
      picture: 'The picture must be an https:// or http:// address (at most 2000 characters).',
      locale: 'Give a language tag such as en, mn or mn-MN.',
      currentWrong: 'The current password is not right.',
      newMissing: 'Choose a new password.',
      emailBad: 'Give an e-mail address, like name@example.com.',
      emailSame: 'This is already your e-mail address.',
      emailTaken: 'Another account uses this e-mail address.',
      phoneBad: 'Give the number in international format: + and the country code, for example +97699112233.',
      phoneSame: 'This is already your phone number.',
      phoneTaken: 'Another account uses this phone number.',
      phoneWrong: 'That code is not right. Check the text message and try again.',
      phoneExpired: 'The code has expired or was tried too many times. Ask for a new one.',
      phoneTooSoon: 'A code was sent a moment ago. Wait a minute before asking for another one.',
      phoneOnly: 'The phone number is the only way to sign in to this account: add an e-mail address first.',
      noPhone: 'No phone number is set.',
      newWeak: 'Choose a new password that meets these rules:',
      notFound: 'That session or application is not there any more.',
      sameAsOld: 'The new password must differ from the current one.',
      noPassword: 'This account has no password yet: use “Forgot password?” on the sign-in page to set one.',
      recent: 'Give your password to confirm: you signed in more than 5 minutes ago.',
      enrolWrong: 'That code is not right. Check that the time on your phone is correct and try again.',
      hasApp: 'An authenticator app is already set up: remove it first.',
      noApp: 'No authenticator app is set up.',
      needMfa:
        'This session signed in without the authenticator app. Sign in again with the app (link below) to change it.',
      csrf: 'The form could not be verified. Open the page again and retry.',
      badForm: 'The form could not be read. Open the page again and retry.',
      unknownAction: 'This form is not known.',
      signInFailed: 'The sign-in did not complete. Open the page again to retry.',
      noAccountApp:
        'The account pages are not set up on this server: no first-party application has this page among its callbacks.',
    },
  },
  mn: {
    title: 'Таны бүртгэл',
    signedInAs: (who: string) => `Та ${who} бүртгэлээр нэвтэрсэн байна.`,
    profile: 'Профайл',
    name: 'Нэр',
    nickname: 'Хоч',
    picture: 'Зургийн хаяг (URL)',
    locale: 'Хэл (жишээ нь en эсвэл mn-MN)',
    email: 'И-мэйл',
    emailVerified: 'баталгаажсан',
    emailUnverified: 'баталгаажаагүй',
    noEmail: 'И-мэйл хаяг байхгүй',
    saveProfile: 'Профайл хадгалах',
    newEmail: 'Шинэ и-мэйл хаяг',
    changeEmail: 'И-мэйл солих',
    emailNote: 'Шинэ хаяг руу баталгаажуулах холбоос, хуучин хаяг руу мэдэгдэл илгээнэ.',
    password: 'Нууц үг',
    currentPassword: 'Одоогийн нууц үг',
    newPassword: 'Шинэ нууц үг',
    changePassword: 'Нууц үг солих',
    passwordRules: 'Нууц үгийн шаардлага:',
    passwordNote: 'Нууц үг солиход бусад нэвтрэлт, програмууд гаргагдана.',
    phone: 'Утас',
    noPhone: 'Утасны дугаар байхгүй',
    newPhone: 'Шинэ утасны дугаар, + тэмдэг болон улсын кодтой (жишээ нь +976 9911 2233)',
    sendPhoneCode: 'Код илгээх',
    phoneNote: 'Дугаар руу 6 оронтой код мессежээр илгээнэ. Кодыг оруулсны дараа дугаар хадгалагдана.',
    phoneCodeSent: (to: string) => `${to} дугаар руу 6 оронтой код илгээлээ. Код 5 минутын турш хүчинтэй.`,
    phoneCode: 'Мессежээр ирсэн код',
    confirmPhone: 'Дугаарыг баталгаажуулах',
    cancelPhone: 'Өөр дугаар ашиглах',
    removePhone: 'Утасны дугаарыг хасах',
    authenticators: 'Хоёр алхамт баталгаажуулалт',
    app: 'Баталгаажуулах апп',
    appOn: (since: string) => `Баталгаажуулах апп: ${since}-с хойш идэвхтэй.`,
    appOff: 'Баталгаажуулах апп тохируулаагүй байна.',
    recovery: (left: number) => `Сэргээх код: ${left} үлдсэн.`,
    noRecovery: 'Сэргээх код байхгүй.',
    removeApp: 'Апп-ыг хасах',
    stepUp: 'Баталгаажуулах апп-аар дахин нэвтрэх',
    reauth: 'Нууц үггүй юу? Оронд нь дахин нэвтэрнэ үү',
    regenerate: 'Шинэ сэргээх кодууд',
    sessions: 'Таны нэвтэрсэн газрууд',
    sessionAt: (at: string) => `${at} (UTC)-д нэвтэрсэн`,
    sessionDevice: (browser: string | null, os: string | null) =>
      browser && os ? `${os} дээрх ${browser}` : (browser ?? os ?? 'Тодорхойгүй хөтөч'),
    sessionSeen: (at: string, ip: string | null) =>
      ip ? `сүүлд ${at} (UTC)-д, ${ip} хаягаас` : `сүүлд ${at} (UTC)-д`,
    thisBrowser: 'энэ хөтөч',
    signOutSession: 'Тэндээс гаргах',
    signOutOthers: 'Бусад бүх газраас гаргах',
    signOutAll: 'Бүх газраас гарах',
    apps: 'Холбогдсон програмууд',
    noApps: 'Таны бүртгэлд хандах эрхтэй програм алга.',
    appSince: (name: string, at: string) => `${name}, ${at}-с хойш`,
    revoke: 'Хандалтыг цуцлах',
    enrol: 'Баталгаажуулах апп тохируулах',
    enrolIntro:
      'Энэ QR кодыг баталгаажуулах апп-аар (Google Authenticator, Microsoft Authenticator, 1Password гэх мэт) уншуулна уу.',
    enrolQr: 'Баталгаажуулах апп-аар уншуулах QR код',
    enrolSecret: 'Уншуулж чадахгүй байна уу? Энэ түлхүүрийг апп-д оруулна уу:',
    enrolCode: 'Апп-ын харуулж буй 6 оронтой кодыг оруулна уу',
    enrolSubmit: 'Идэвхжүүлэх',
    confirmPassword: 'Таны нууц үг (нэвтэрснээс хойш 5 минутын дотор шаардлагагүй)',
    codesTitle: 'Сэргээх кодуудаа хадгална уу',
    codesIntro:
      'Утсаа алдвал эдгээр код бүрээр апп-ын оронд нэг удаа нэвтэрч болно. Аюулгүй газар хадгална уу: зөвхөн одоо харуулна. Хуучин кодууд ажиллахаа больсон.',
    back: 'Бүртгэл рүүгээ буцах',
    signOut: 'Гарах',
    passkeys: 'Passkey',
    passkeysIntro:
      'Passkey нь энэ төхөөрөмжийн дэлгэцийн түгжээ эсвэл аюулгүйн түлхүүрээр нууц үггүйгээр нэвтрүүлнэ. Мөн хоёр дахь алхамд тооцогдоно.',
    noPasskeys: 'Passkey тохируулаагүй байна.',
    passkeyMeta: (created: string, used: string | null) =>
      `${created}-нд нэмсэн · ${used ? `сүүлд ${used} (UTC)-д ашигласан` : 'хараахан ашиглаагүй'}`,
    passkeyNewName: 'Шинэ passkey-н нэр (жишээ нь “Ажлын зөөврийн компьютер”)',
    passkeyDefaultName: 'Passkey',
    addPasskey: 'Passkey нэмэх',
    renamePasskey: 'Нэр солих',
    renameLabel: (name: string) => `“${name}”-н шинэ нэр`,
    removePasskey: 'Хасах',
    removeLabel: (name: string) => `“${name}”-г хасах`,
    passkeyRemovePassword: 'Passkey хасахад таны нууц үг (нэвтэрснээс хойш 5 минутын дотор шаардлагагүй)',
    passkeyNoScript: 'Passkey нэмэхэд JavaScript болон passkey дэмждэг хөтөч шаардлагатай.',
    passkeyCancelled: 'Passkey нэмэгдсэнгүй. Дахин оролдоно уу.',
    passkeyExists: 'Энэ төхөөрөмж эсвэл аюулгүйн түлхүүрт таны бүртгэлийн passkey аль хэдийн байна.',
    passkeyStepUp: 'Passkey-ээ өөрчлөхийн тулд хоёр дахь алхамтайгаар дахин нэвтрэх',
    done: {
      profile: 'Таны профайл хадгалагдлаа.',
      email: 'Таны и-мэйл хаяг солигдлоо. Шинэ хаяг руу илгээсэн холбоосыг нээж баталгаажуулна уу.',
      password: 'Таны нууц үг солигдлоо. Бусад нэвтрэлт, програмууд гаргагдлаа.',
      removed: 'Баталгаажуулах апп хасагдлаа. Хоёр алхамт баталгаажуулалт унтарлаа.',
      enrolled: 'Хоёр алхамт баталгаажуулалт идэвхжлээ.',
      sessionEnded: 'Тэр нэвтрэлтийг гаргалаа.',
      othersEnded: 'Бусад нэвтрэлтүүдийг гаргалаа.',
      revoked: 'Програм таны бүртгэлд хандах эрхгүй боллоо.',
      phone: 'Таны утасны дугаар баталгаажиж хадгалагдлаа.',
      phoneRemoved: 'Таны утасны дугаар хасагдлаа.',
      passkeyAdded: 'Passkey нэмэгдлээ: түүгээр нэвтэрч болно.',
      passkeyRenamed: 'Passkey-н нэр солигдлоо.',
      passkeyRemoved: 'Passkey хасагдлаа.',
    },
    errors: {
      passkeyFailed: 'Passkey нэмж чадсангүй. Дахин оролдоно уу.',
      passkeyDuplicate: 'Энэ passkey таны бүртгэлд аль хэдийн нэмэгдсэн байна.',
      passkeyTooMany: 'Та зөвшөөрөгдөх хамгийн олон (20) passkey-тэй байна. Эхлээд нэгийг хасна уу.',
      passkeyNotFound: 'Тэр passkey байхгүй болсон байна.',
      passkeyName: 'Passkey-д нэр өгнө үү (хамгийн ихдээ 100 тэмдэгт).',
      passkeyNeedMfa:
        'Энэ нэвтрэлт хоёр дахь алхам ашиглаагүй. Passkey-ээ өөрчлөхийн тулд passkey эсвэл апп-аараа дахин нэвтэрнэ үү (доорх холбоос).',
      nameLong: 'Нэр хэт урт байна (хамгийн ихдээ 200 тэмдэгт).',
      nicknameLong: 'Хоч хэт урт байна (хамгийн ихдээ 200 тэмдэгт).',
      control: 'Нэрэнд удирдах тэмдэгт байж болохгүй.',
      picture: 'Зураг https:// эсвэл http:// хаяг байх ёстой (хамгийн ихдээ 2000 тэмдэгт).',
      locale: 'en, mn эсвэл mn-MN гэх мэт хэлний код оруулна уу.',
      currentWrong: 'Одоогийн нууц үг буруу байна.',
      newMissing: 'Шинэ нууц үг сонгоно уу.',
      emailBad: 'И-мэйл хаяг оруулна уу, жишээ нь name@example.com.',
      emailSame: 'Энэ аль хэдийн таны и-мэйл хаяг байна.',
      emailTaken: 'Энэ и-мэйл хаягийг өөр бүртгэл ашиглаж байна.',
      phoneBad: 'Дугаарыг олон улсын хэлбэрээр оруулна уу: + тэмдэг, улсын код, жишээ нь +97699112233.',
      phoneSame: 'Энэ аль хэдийн таны утасны дугаар байна.',
      phoneTaken: 'Энэ утасны дугаарыг өөр бүртгэл ашиглаж байна.',
      phoneWrong: 'Код буруу байна. Мессежээ шалгаад дахин оролдоно уу.',
      phoneExpired: 'Кодын хугацаа дууссан эсвэл хэт олон удаа оролдсон байна. Шинэ код авна уу.',
      phoneTooSoon: 'Код саяхан илгээсэн. Дахин авахаас өмнө нэг минут хүлээнэ үү.',
      phoneOnly: 'Энэ бүртгэлд зөвхөн утасны дугаараар нэвтэрдэг: эхлээд и-мэйл хаяг нэмнэ үү.',
      noPhone: 'Утасны дугаар тохируулаагүй байна.',
      newWeak: 'Дараах шаардлагыг хангасан шинэ нууц үг сонгоно уу:',
      notFound: 'Тэр нэвтрэлт эсвэл програм байхгүй болсон байна.',
      sameAsOld: 'Шинэ нууц үг одоогийнхоос өөр байх ёстой.',
      noPassword:
        'Энэ бүртгэлд нууц үг алга: нэвтрэх хуудасны “Нууц үгээ мартсан уу?” холбоосоор нууц үг тохируулна уу.',
      recent: 'Баталгаажуулахын тулд нууц үгээ оруулна уу: та 5 минутаас өмнө нэвтэрсэн байна.',
      enrolWrong: 'Код буруу байна. Утасныхаа цаг зөв эсэхийг шалгаад дахин оролдоно уу.',
      hasApp: 'Баталгаажуулах апп аль хэдийн тохируулагдсан байна: эхлээд хасна уу.',
      noApp: 'Баталгаажуулах апп тохируулаагүй байна.',
      needMfa:
        'Энэ нэвтрэлт баталгаажуулах апп ашиглаагүй. Өөрчлөхийн тулд апп-аар дахин нэвтэрнэ үү (доорх холбоос).',
      csrf: 'Маягтыг баталгаажуулж чадсангүй. Хуудсыг дахин нээгээд оролдоно уу.',
      badForm: 'Маягтыг уншиж чадсангүй. Хуудсыг дахин нээгээд оролдоно уу.',
      unknownAction: 'Ийм маягт танигдаагүй байна.',
      signInFailed: 'Нэвтрэлт дуусаагүй. Хуудсыг дахин нээж оролдоно уу.',
      noAccountApp:
        'Энэ серверт бүртгэлийн хуудас тохируулаагүй байна: энэ хуудсыг буцах хаягтаа агуулсан үндсэн програм алга.',
    },
  },
} as const;

export type AccountError = keyof (typeof TEXT)['en']['errors'];

/** The sentence of an AccountError in `locale` (the passkey script shows it). */
export const accountErrorText = (locale: Locale, error: AccountError): string => TEXT[locale].errors[error];
export type AccountDone = keyof (typeof TEXT)['en']['done'];

/** What the account page shows of the person. */
export interface AccountView {
  label: string;
  name: string;
  nickname: string;
  picture: string;
  locale: string;
  email: string | null;
  emailVerified: boolean;
  phone: string | null;
  phoneVerified: boolean;
  /** A new number waiting for its code (sent by text message), or null. */
  pendingPhone: string | null;
  /** When the confirmed authenticator app was set up (ISO date), or null. */
  appSince: string | null;
  /** Unused recovery codes, or null without a set. */
  recoveryLeft: number | null;
  hasPassword: boolean;
  /** The person's live sessions (by their public uid, never the cookie's id), newest first. */
  sessions: {
    uid: string;
    loginAt: string;
    current: boolean;
    /** Browser and operating system from the session's user agent (null: not told). */
    browser: string | null;
    os: string | null;
    ip: string | null;
    /** When the session was last used (UTC, minutes), or null when no use was recorded. */
    lastSeen: string | null;
  }[];
  /** The applications with access: the person's grants, by client (one per session a first party signed in). */
  apps: { clientId: string; name: string; since: string }[];
  /** The person's passkeys (name, when added and last used: never a key), oldest first. */
  passkeys?: { id: string; name: string; createdAt: string; lastUsedAt: string | null }[];
  /** The session signed in within the last 5 minutes (the passkey forms then ask no password). */
  recentSignIn?: boolean;
}

export interface AccountPageInput {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  view: AccountView;
  /** The instance's password rules, in the page's language. */
  rules: string[];
  /** The form that failed and its errors (the alert box above that form). */
  error?: {
    form: 'profile' | 'email' | 'phone' | 'password' | 'factors' | 'passkeys' | 'sessions' | 'apps';
    messages: AccountError[];
    extra?: string[];
  };
  done?: AccountDone;
  /** The values a failed profile form had (shown again, nothing written). */
  profileInput?: Partial<Pick<AccountView, 'name' | 'nickname' | 'picture' | 'locale'>>;
  /** The new e-mail a failed e-mail form had. */
  emailInput?: string;
  /** The new phone number a failed phone form had. */
  phoneInput?: string;
  /** The sign-out link (RP-initiated logout's confirmation page). */
  signOutHref: string;
  /** The link signing in again with the second factor, when this session's sign-in did not use it. */
  stepUpHref?: string;
  /** The link signing in again (a new sign-in is a recent one), offered where a change asks for a recent sign-in. */
  reauthHref?: string;
}

const hidden = (name: string, value: string) =>
  `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

/** The error box: one sentence, or the list of them (as the ticket pages' password errors). */
function alertBox(id: string, messages: readonly string[]): string {
  if (messages.length === 1)
    return `<p class="alert" role="alert" id="${id}">${escapeHtml(messages[0])}</p>\n`;
  return `<div class="alert" role="alert" id="${id}"><ul>${messages
    .map((m) => `<li>${escapeHtml(m)}</li>`)
    .join('')}</ul></div>\n`;
}

export function accountPage(o: AccountPageInput): string {
  const t = TEXT[o.locale];
  const v = o.view;
  const p = { ...v, ...o.profileInput };
  const errorOf = (form: string) =>
    o.error?.form === form
      ? alertBox(`${form}-error`, [...o.error.messages.map((m) => t.errors[m]), ...(o.error.extra ?? [])]) +
        (o.reauthHref && o.error.messages.includes('recent')
          ? `<p><a href="${escapeHtml(o.reauthHref)}" id="reauth">${escapeHtml(t.reauth)}</a></p>\n`
          : '')
      : '';
  const described = (form: string) => (o.error?.form === form ? ` aria-describedby="${form}-error"` : '');
  const done = o.done
    ? `<p class="notice" role="status" id="account-done">${escapeHtml(t.done[o.done])}</p>\n`
    : '';
  const field = (name: 'name' | 'nickname' | 'picture' | 'locale', type: string, autocomplete: string) =>
    `<label for="${name}">${escapeHtml(t[name])}</label>
<input id="${name}" name="${name}" type="${type}" autocomplete="${autocomplete}" value="${escapeHtml(p[name])}"${described('profile')}>`;
  const email = v.email
    ? `${escapeHtml(v.email)} (${escapeHtml(v.emailVerified ? t.emailVerified : t.emailUnverified)})`
    : escapeHtml(t.noEmail);
  const rules = o.rules.length
    ? `\n<div class="hint" id="password-rules"><p>${escapeHtml(t.passwordRules)}</p><ul>${o.rules
        .map((r) => `<li>${escapeHtml(r)}</li>`)
        .join('')}</ul></div>`
    : '';
  const confirm = `<label for="factor-password">${escapeHtml(t.confirmPassword)}</label>
<input id="factor-password" name="current_password" type="password" autocomplete="current-password"${described('factors')}>`;
  const keys = v.passkeys ?? [];
  // the password fields only when the sign-in is not recent (a recent one stands in for it)
  const askPassword = !v.recentSignIn;
  const passkeys = `<h2 class="section" id="passkeys-heading">${escapeHtml(t.passkeys)}</h2>
${errorOf('passkeys')}<p class="hint">${escapeHtml(t.passkeysIntro)}</p>
${
  keys.length
    ? `<ul class="passkeys" id="passkeys">
${keys
  .map(
    (k) => `<li data-passkey="${escapeHtml(k.id)}"><strong class="passkey-name">${escapeHtml(k.name)}</strong>
<p class="hint">${escapeHtml(t.passkeyMeta(k.createdAt, k.lastUsedAt))}</p>
<form method="post" action="${escapeHtml(o.action)}" class="row" novalidate>
${hidden('csrf', o.csrf)}${hidden('action', 'rename_passkey')}${hidden('passkey', k.id)}
<input name="name" type="text" maxlength="100" value="${escapeHtml(k.name)}" aria-label="${escapeHtml(t.renameLabel(k.name))}">
<button type="submit" class="secondary">${escapeHtml(t.renamePasskey)}</button>
<button type="submit" form="remove-passkey" name="passkey" value="${escapeHtml(k.id)}" class="secondary" aria-label="${escapeHtml(t.removeLabel(k.name))}">${escapeHtml(t.removePasskey)}</button>
</form></li>`,
  )
  .join('\n')}
</ul>
<form method="post" action="${escapeHtml(o.action)}" id="remove-passkey" novalidate>
${hidden('csrf', o.csrf)}
${hidden('action', 'remove_passkey')}${
        askPassword
          ? `\n<label for="passkey-password">${escapeHtml(t.passkeyRemovePassword)}</label>
<input id="passkey-password" name="current_password" type="password" autocomplete="current-password"${described('passkeys')}>`
          : ''
      }
</form>`
    : `<p id="passkeys">${escapeHtml(t.noPasskeys)}</p>`
}
${passkeyForm({
  alert: hiddenAlert('passkey-add-error', t.passkeyCancelled, true, t.passkeyExists),
  kind: 'register',
  action: o.action,
  optionsUrl: o.action,
  optionsAction: 'passkey_options',
  csrf: o.csrf,
  id: 'add-passkey',
  errorId: 'passkey-add-error',
  fields: `
${hidden('action', 'passkey_register')}
<label for="passkey-name">${escapeHtml(t.passkeyNewName)}</label>
<input id="passkey-name" name="name" type="text" maxlength="100" value="${escapeHtml(t.passkeyDefaultName)}">${
    askPassword
      ? `\n<label for="add-passkey-password">${escapeHtml(t.confirmPassword)}</label>
<input id="add-passkey-password" name="current_password" type="password" autocomplete="current-password">`
      : ''
  }`,
  button: t.addPasskey,
})}
<noscript><p class="hint">${escapeHtml(t.passkeyNoScript)}</p></noscript>${
    o.stepUpHref && keys.length
      ? `\n<p><a href="${escapeHtml(o.stepUpHref)}" id="passkey-step-up">${escapeHtml(t.passkeyStepUp)}</a></p>`
      : ''
  }${passkeyScriptTag(o.nonce)}`;
  const factors = v.appSince
    ? `<p id="app-status">${escapeHtml(t.appOn(v.appSince))}</p>
<p id="recovery-status">${escapeHtml(v.recoveryLeft === null ? t.noRecovery : t.recovery(v.recoveryLeft))}</p>
<form method="post" action="${escapeHtml(o.action)}" novalidate>
${hidden('csrf', o.csrf)}
${confirm}
<button type="submit" name="action" value="remove_app" id="remove-app">${escapeHtml(t.removeApp)}</button>
<button type="submit" name="action" value="regenerate_codes" class="secondary" id="regenerate-codes">${escapeHtml(t.regenerate)}</button>
</form>${o.stepUpHref ? `\n<p><a href="${escapeHtml(o.stepUpHref)}" id="step-up">${escapeHtml(t.stepUp)}</a></p>` : ''}`
    : `<p id="app-status">${escapeHtml(t.appOff)}</p>
<form method="post" action="${escapeHtml(o.action)}" novalidate>
${hidden('csrf', o.csrf)}
${confirm}
<button type="submit" name="action" value="enrol_start" id="enrol-start">${escapeHtml(t.enrol)}</button>
</form>`;
  return layout(
    o.locale,
    t.title,
    o.nonce,
    `<h1>${escapeHtml(t.title)}</h1>
<p id="signed-in-as">${escapeHtml(t.signedInAs(v.label))} <a href="${escapeHtml(o.signOutHref)}" id="sign-out">${escapeHtml(t.signOut)}</a></p>
${done}<h2 class="section" id="profile-heading">${escapeHtml(t.profile)}</h2>
${errorOf('profile')}<form method="post" action="${escapeHtml(o.action)}" novalidate aria-labelledby="profile-heading">
${hidden('csrf', o.csrf)}
${hidden('action', 'profile')}
${field('name', 'text', 'name')}
${field('nickname', 'text', 'nickname')}
${field('picture', 'url', 'photo')}
${field('locale', 'text', 'language')}
<button type="submit" id="save-profile">${escapeHtml(t.saveProfile)}</button>
</form>
<h2 class="section" id="email-heading">${escapeHtml(t.email)}</h2>
<p id="account-email">${email}</p>
${errorOf('email')}<form method="post" action="${escapeHtml(o.action)}" novalidate aria-labelledby="email-heading">
${hidden('csrf', o.csrf)}
${hidden('action', 'email')}
<label for="new_email">${escapeHtml(t.newEmail)}</label>
<input id="new_email" name="new_email" type="email" autocomplete="email" value="${escapeHtml(o.emailInput ?? '')}"${described('email')}>
<label for="email-password">${escapeHtml(t.confirmPassword)}</label>
<input id="email-password" name="current_password" type="password" autocomplete="current-password"${described('email')}>
<p class="hint">${escapeHtml(t.emailNote)}</p>
<button type="submit" id="change-email">${escapeHtml(t.changeEmail)}</button>
</form>
${phoneSection(o, errorOf('phone'), described('phone'))}
<h2 class="section" id="password-heading">${escapeHtml(t.password)}</h2>
${errorOf('password')}<form method="post" action="${escapeHtml(o.action)}" novalidate aria-labelledby="password-heading">
${hidden('csrf', o.csrf)}
${hidden('action', 'password')}
<input type="hidden" name="username" autocomplete="username" value="${escapeHtml(v.label)}">
<label for="current_password">${escapeHtml(t.currentPassword)}</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password"${described('password')}>
<label for="new_password">${escapeHtml(t.newPassword)}</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password"${o.rules.length ? ' aria-describedby="password-rules"' : ''}>${rules}
<p class="hint">${escapeHtml(t.passwordNote)}</p>
<button type="submit" id="change-password">${escapeHtml(t.changePassword)}</button>
</form>
<h2 class="section" id="factors-heading">${escapeHtml(t.authenticators)}</h2>
${errorOf('factors')}${factors}
${passkeys}
<h2 class="section" id="sessions-heading">${escapeHtml(t.sessions)}</h2>
${errorOf('sessions')}<ul id="sessions" class="sessions">
${v.sessions.map((x) => sessionItem(o, x)).join('\n')}
</ul>
<form method="post" action="${escapeHtml(o.action)}">
${hidden('csrf', o.csrf)}
<div class="actions">${v.sessions.length > 1 ? `<button type="submit" name="action" value="end_other_sessions" id="sign-out-others">${escapeHtml(t.signOutOthers)}</button>\n` : ''}<button type="submit" name="action" value="end_all_sessions" class="${v.sessions.length > 1 ? 'secondary' : ''}" id="sign-out-all">${escapeHtml(t.signOutAll)}</button></div>
</form>
<h2 class="section" id="apps-heading">${escapeHtml(t.apps)}</h2>
${errorOf('apps')}${
      v.apps.length
        ? `<ul id="apps">
${v.apps
  .map(
    (a) =>
      `<li>${escapeHtml(t.appSince(a.name, a.since))} <form method="post" action="${escapeHtml(o.action)}" class="inline">${hidden('csrf', o.csrf)}${hidden('action', 'revoke_app')}${hidden('client', a.clientId)}<button type="submit" class="link">${escapeHtml(t.revoke)}</button></form></li>`,
  )
  .join('\n')}
</ul>`
        : `<p id="apps">${escapeHtml(t.noApps)}</p>`
    }`,
  );
}

/** One session of the list: its device, where and when it was last used; a sign-out button unless it is this one. */
function sessionItem(o: AccountPageInput, x: AccountView['sessions'][number]): string {
  const t = TEXT[o.locale];
  const when = [t.sessionAt(x.loginAt), ...(x.lastSeen ? [t.sessionSeen(x.lastSeen, x.ip)] : [])].join('; ');
  const end = x.current
    ? ''
    : `<br><form method="post" action="${escapeHtml(o.action)}" class="inline">${hidden('csrf', o.csrf)}${hidden('action', 'end_session')}${hidden('session', x.uid)}<button type="submit" class="link">${escapeHtml(t.signOutSession)}</button></form>`;
  return `<li${x.current ? ' id="current-session"' : ''}><strong class="device">${escapeHtml(t.sessionDevice(x.browser, x.os))}</strong>${x.current ? ` (${escapeHtml(t.thisBrowser)})` : ''}<br><span class="hint">${unbrokenTimes(escapeHtml(when))}</span>${end}</li>`;
}

/** Each `YYYY-MM-DD HH:MM` of (escaped) text kept on one line. */
function unbrokenTimes(html: string): string {
  return html.replace(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}/g, (t) => `<span class="nowrap">${t}</span>`);
}

/**
 * The phone number: shown with its state; a new one asked for (a code goes to it by text message), or, while one
 * waits for its code, the code's form; removing it.
 */
function phoneSection(o: AccountPageInput, error: string, described: string): string {
  const t = TEXT[o.locale];
  const v = o.view;
  const current = v.phone
    ? `${escapeHtml(v.phone)} (${escapeHtml(v.phoneVerified ? t.emailVerified : t.emailUnverified)})`
    : escapeHtml(t.noPhone);
  // each button names its action: Enter submits the form's first one
  const form = (body: string) =>
    `<form method="post" action="${escapeHtml(o.action)}" novalidate aria-labelledby="phone-heading">
${hidden('csrf', o.csrf)}
${body}
</form>`;
  const ask = v.pendingPhone
    ? `<p class="notice" role="status" id="phone-sent">${escapeHtml(t.phoneCodeSent(v.pendingPhone))}</p>
${error}${form(
        `<label for="phone_code">${escapeHtml(t.phoneCode)}</label>
<input id="phone_code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6"${described}>
<div class="actions"><button type="submit" name="action" value="phone_confirm" id="confirm-phone">${escapeHtml(t.confirmPhone)}</button>
<button type="submit" name="action" value="phone_cancel" class="secondary" id="cancel-phone">${escapeHtml(t.cancelPhone)}</button></div>`,
      )}`
    : `${error}${form(
        `<label for="new_phone">${escapeHtml(t.newPhone)}</label>
<input id="new_phone" name="new_phone" type="tel" autocomplete="tel" value="${escapeHtml(o.phoneInput ?? '')}"${described}>
<label for="phone-password">${escapeHtml(t.confirmPassword)}</label>
<input id="phone-password" name="current_password" type="password" autocomplete="current-password"${described}>
<p class="hint">${escapeHtml(t.phoneNote)}</p>
<div class="actions"><button type="submit" name="action" value="phone_start" id="send-phone-code">${escapeHtml(t.sendPhoneCode)}</button>${
          v.phone
            ? `\n<button type="submit" name="action" value="phone_remove" class="secondary" id="remove-phone">${escapeHtml(t.removePhone)}</button>`
            : ''
        }</div>`,
      )}`;
  return `<h2 class="section" id="phone-heading">${escapeHtml(t.phone)}</h2>
<p id="account-phone">${current}</p>
${ask}`;
}

/** Enrolment of an authenticator app from the account page: QR code, secret, the app's first code. */
export function accountEnrolPage(o: {
  locale: Locale;
  nonce: string;
  action: string;
  csrf: string;
  qrSvg: string;
  secret: string;
  error?: AccountError;
}): string {
  const t = TEXT[o.locale];
  const svg = o.qrSvg.replace('<svg ', `<svg class="qr" role="img" aria-label="${escapeHtml(t.enrolQr)}" `);
  const error = o.error ? alertBox('enrol-error', [t.errors[o.error]]) : '';
  return layout(
    o.locale,
    t.enrol,
    o.nonce,
    `<h1>${escapeHtml(t.enrol)}</h1>
<p>${escapeHtml(t.enrolIntro)}</p>
${svg}
<p>${escapeHtml(t.enrolSecret)}<br><code class="secret" id="totp-secret">${escapeHtml(groupedSecret(o.secret))}</code></p>
${error}<form method="post" action="${escapeHtml(o.action)}" novalidate>
${hidden('csrf', o.csrf)}
${hidden('action', 'enrol_confirm')}
<label for="otp">${escapeHtml(t.enrolCode)}</label>
<input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus${o.error ? ' aria-describedby="enrol-error"' : ''}>
<button type="submit">${escapeHtml(t.enrolSubmit)}</button>
</form>
<p><a href="${escapeHtml(o.action)}">${escapeHtml(t.back)}</a></p>`,
  );
}

/** New recovery codes, shown once. */
export function accountCodesPage(o: {
  locale: Locale;
  nonce: string;
  codes: readonly string[];
  backHref: string;
  enrolled: boolean;
}): string {
  const t = TEXT[o.locale];
  return layout(
    o.locale,
    t.codesTitle,
    o.nonce,
    `<h1>${escapeHtml(t.codesTitle)}</h1>
${o.enrolled ? `<p class="notice" role="status">${escapeHtml(t.done.enrolled)}</p>\n` : ''}<p>${escapeHtml(t.codesIntro)}</p>
${recoveryCodesList(o.codes)}
<p><a class="button" id="back" href="${escapeHtml(o.backHref)}">${escapeHtml(t.back)}</a></p>`,
  );
}

/** A page that can only say why the account page cannot go on. */
export function accountErrorPage(o: { locale: Locale; nonce: string; error: AccountError }): string {
  const t = TEXT[o.locale];
  return layout(
    o.locale,
    t.title,
    o.nonce,
    `<h1>${escapeHtml(t.title)}</h1>\n<p class="alert" role="alert">${escapeHtml(t.errors[o.error])}</p>`,
  );
}

/** The kinds of notice the account page sends (the delivery outbox's `kind`). */
export type AccountNoticeKind =
  'password-changed' | 'factor-removed' | 'email-changed' | 'phone-changed' | 'phone-removed';

const MESSAGES = {
  en: {
    notice: {
      'password-changed': {
        subject: 'Your password was changed',
        what: () => 'The password of your account was changed from the account page.',
      },
      'factor-removed': {
        subject: 'Two-step verification was removed',
        what: () =>
          'Two-step verification (the authenticator app and its recovery codes) was removed from your account.',
      },
      'email-changed': {
        subject: 'Your e-mail address was changed',
        what: () =>
          'The e-mail address of your account was changed from the account page: this address is no longer it.',
      },
      'phone-changed': {
        subject: 'Your phone number was changed',
        what: (phone: string) => `The phone number of your account is now ${phone}.`,
      },
      'phone-removed': {
        subject: 'Your phone number was removed',
        what: () => 'The phone number was removed from your account.',
      },
    },
    tail: 'If it was not you, reset your password now and contact your administrator.',
    verifySubject: 'Verify your new e-mail address',
    verifyText:
      'Open this link to verify the new e-mail address of your account (it works once, for 24 hours):',
    phoneCode: (code: string, minutes: number) =>
      `${code} is your code to verify this phone number for your account (${minutes} min).`,
  },
  mn: {
    notice: {
      'password-changed': {
        subject: 'Таны нууц үг солигдлоо',
        what: () => 'Таны бүртгэлийн нууц үгийг бүртгэлийн хуудаснаас сольсон байна.',
      },
      'factor-removed': {
        subject: 'Хоёр алхамт баталгаажуулалтыг хаслаа',
        what: () =>
          'Таны бүртгэлээс хоёр алхамт баталгаажуулалтыг (баталгаажуулах апп болон сэргээх кодууд) хаслаа.',
      },
      'email-changed': {
        subject: 'Таны и-мэйл хаяг солигдлоо',
        what: () =>
          'Таны бүртгэлийн и-мэйл хаягийг бүртгэлийн хуудаснаас сольсон: энэ хаяг цаашид таны бүртгэлийнх биш.',
      },
      'phone-changed': {
        subject: 'Таны утасны дугаар солигдлоо',
        what: (phone: string) => `Таны бүртгэлийн утасны дугаар одоо ${phone} боллоо.`,
      },
      'phone-removed': {
        subject: 'Таны утасны дугаар хасагдлаа',
        what: () => 'Таны бүртгэлээс утасны дугаарыг хаслаа.',
      },
    },
    tail: 'Хэрэв энэ та биш бол нууц үгээ яаралтай сэргээж, админтайгаа холбогдоно уу.',
    verifySubject: 'Шинэ и-мэйл хаягаа баталгаажуулна уу',
    verifyText:
      'Бүртгэлийнхээ шинэ и-мэйл хаягийг баталгаажуулахын тулд энэ холбоосыг нээнэ үү (нэг удаа, 24 цагийн турш ажиллана):',
    phoneCode: (code: string, minutes: number) =>
      `${code} бол таны бүртгэлд энэ утасны дугаарыг баталгаажуулах код (${minutes} мин).`,
  },
} as const;

/**
 * The language of a message about the account: the person's own `locale` (their profile) when the pages have it,
 * else the language of the page the change was made on. A notice is read later, maybe elsewhere; the profile says
 * what the person reads.
 */
export function messageLocale(userLocale: string | null | undefined, pageLocale: Locale): Locale {
  const primary = (userLocale ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return primary === 'en' || primary === 'mn' ? primary : pageLocale;
}

/** A notice of a change: its subject, the sentence saying what changed and the advice if it was not the person. */
export function accountNotice(
  locale: Locale,
  kind: AccountNoticeKind,
  phone = '',
): { subject: string; what: string; tail: string } {
  const m = MESSAGES[locale];
  return { subject: m.notice[kind].subject, what: m.notice[kind].what(phone), tail: m.tail };
}

/** The e-mail to a new address with its verification link: subject and the sentence before the link. */
export function verificationMessage(locale: Locale): { subject: string; text: string } {
  return { subject: MESSAGES[locale].verifySubject, text: MESSAGES[locale].verifyText };
}

/** The text message carrying a new phone number's code. */
export function phoneCodeMessage(locale: Locale, code: string, minutes: number): string {
  return MESSAGES[locale].phoneCode(code, minutes);
}
