// The local image-prompt policy (SPEC 4.3 categories). Terms are matched on whole words after normalization
// (see normalize.ts), so "sextant" or "Essex" never match "sex". Documented in docs/moderation.md.

export type ModerationCategory = "sexual" | "violence" | "hate" | "intellectual_property" | "personal_information";

export const CATEGORY_LABELS: Record<ModerationCategory, string> = {
  sexual: "explicit sexual content",
  violence: "violence and gore",
  hate: "hateful or discriminatory imagery",
  intellectual_property: "content infringing intellectual property",
  personal_information: "personal or private information",
};

export const TERMS: Record<ModerationCategory, string[]> = {
  sexual: [
    "nude", "nudes", "nudity", "naked", "nsfw", "porn", "porno", "pornography", "pornographic", "sex", "sexual", "sexually explicit",
    "explicit sex", "erotic", "erotica", "hentai", "xxx", "topless", "bottomless", "genitals", "genitalia", "penis", "vagina",
    "nipples", "orgasm", "intercourse", "blowjob", "fetish", "bdsm", "onlyfans", "stripper", "striptease",
  ],
  violence: [
    "gore", "gory", "bloodbath", "blood bath", "decapitated", "decapitation", "beheading", "beheaded", "dismembered", "dismemberment",
    "disembowel", "disemboweled", "mutilated", "mutilation", "severed head", "severed limbs", "torture", "tortured", "massacre",
    "mass shooting", "school shooting", "execution video", "corpse", "corpses", "mangled body", "guts spilling", "slaughtered",
    "murder", "murders", "murdered", "murdering", "murderer", "stabbing", "stabbed", "stabs", "shot dead", "shooting a man",
    "shooting a woman", "shooting people", "killing a man", "killing a woman", "killing people", "lynching", "lynched",
    "blood splatter", "blood spatter", "bloody wound", "gunshot wound", "slit throat", "throat slit",
  ],
  hate: [
    "nazi propaganda", "white power", "white supremacy", "white supremacist", "kkk", "ku klux klan", "swastika", "ethnic cleansing",
    "genocide propaganda", "racial slur", "racist caricature", "antisemitic", "antisemitism", "islamophobic", "homophobic", "transphobic",
    "hate symbol", "master race", "subhuman",
  ],
  intellectual_property: [
    "mickey mouse", "minnie mouse", "donald duck", "pikachu", "pokemon", "super mario", "luigi", "darth vader", "star wars",
    "spiderman", "spider man", "batman", "superman", "iron man", "harry potter", "hello kitty", "sonic the hedgehog",
    "disney logo", "nike logo", "apple logo", "coca cola logo", "mcdonalds logo", "marvel", "pixar", "shrek", "simpsons",
    "nike swoosh", "swoosh logo", "adidas logo", "starbucks logo", "google logo", "microsoft logo", "amazon logo", "pepsi logo",
    "louis vuitton", "gucci logo", "chanel logo", "ferrari logo", "lego logo", "mercedes logo", "batmobile", "hogwarts",
    "elsa from frozen", "buzz lightyear", "winnie the pooh", "the avengers", "captain america", "wonder woman", "yoda",
  ],
  personal_information: [
    "social security number", "ssn", "passport number", "credit card number", "bank account number", "home address of",
    "driver license number", "drivers license number", "phone number of", "medical records of",
    "passport", "passports", "driver license", "drivers license", "driving licence", "id card", "identity card",
    "national id", "social security card", "birth certificate", "bank statement", "tax return",
  ],
};

/** Patterns on the raw prompt: identifiers that are personal data whatever the words around them. */
export const PERSONAL_PATTERNS: Array<{ name: string; pattern: RegExp }> = [
  { name: "social security number", pattern: /\b\d{3}-\d{2}-\d{4}\b/ },
  { name: "e-mail address", pattern: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/ },
  { name: "phone number", pattern: /(?:\+\d{1,3}[\s.-]?)?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}\b/ },
  { name: "payment card number", pattern: /\b(?:\d[ -]?){13,19}\b/ },
];
