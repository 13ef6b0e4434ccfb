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

/**
 * Words and phrases that are a violation wherever they appear, matched as whole words on the normalized text. Words
 * that are harmless on their own ("marvel", "luigi", "passport", "sexy") are not here but in rules.ts, with the
 * context that makes them a violation.
 */
export const TERMS: Record<ModerationCategory, string[]> = {
  sexual: [
    "nude", "nudes", "nudity", "naked", "nsfw", "porn", "porno", "pornography", "pornographic", "sex", "sexual", "sexually explicit",
    "explicit sex", "sex scene", "sex act", "erotic", "erotica", "hentai", "xxx", "topless", "bottomless", "genitals", "genitalia",
    "penis", "vagina", "nipple", "nipples", "orgasm", "intercourse", "blowjob", "fetish", "bdsm", "onlyfans", "stripper", "striptease",
    "strip tease", "undressed", "undressing", "unclothed", "without clothes", "without any clothes", "without clothing",
    "wearing nothing", "no clothes on", "bare breasts", "exposed breasts", "bare breasted", "lewd", "slutty",
    "rape", "rapes", "raped", "raping", "rapist", "rapists", "masturbate", "masturbates", "masturbating", "masturbation", "orgy",
    "orgies", "strippers", "penises", "vaginas", "pornstar", "pornstars", "porn star", "porn stars", "bare breast", "boobs",
    // sex acts and body parts by their slang names ("a dick pic", "a bukkake scene"); "cock", "pussy" and "tits" are also
    // animals, so they are not listed
    "blowjobs", "blow job", "blow jobs", "handjob", "handjobs", "cumshot", "cumshots", "cum shot", "dick pic", "dick pics",
    "bukkake", "fellatio", "cunnilingus", "titties", "dildo", "dildos", "upskirt", "gangbang", "milf",
    // the internet's misspelling of porn ("pr0n" reads "pron")
    "pron",
  ],
  violence: [
    "gore", "gory", "bloodbath", "blood bath", "decapitate", "decapitates", "decapitated", "decapitating", "decapitation",
    "behead", "beheads", "beheaded", "beheading", "beheadings", "dismember", "dismembers", "dismembered", "dismembering",
    "dismemberment", "disembowel", "disembowels", "disemboweled", "disembowelled", "disemboweling", "disembowelling", "mutilate",
    "mutilates", "mutilated", "mutilating", "mutilation", "severed head", "severed heads", "severed limbs", "torture", "tortured",
    "torturing", "massacre", "massacres", "mass shooting", "school shooting", "execution video", "corpse", "corpses", "dead body", "dead bodies", "mangled body",
    "guts spilling", "slaughtered", "murder", "murders", "murdered", "murdering", "murderer", "murderers", "stabbing", "stabbed", "stabs",
    "shot dead", "shot in the head", "shot in the face", "shot through the head", "head blown off", "brains blown out",
    "blood and brains", "brains everywhere", "brains splattered", "splattered brains", "brain matter", "lynching", "lynched",
    "blood splatter", "blood spatter", "bloody wound", "gunshot wound", "slit throat", "throat slit", "beaten to death",
    "beat to death", "beating to death", "shot to death", "shooting civilians", "shooting hostages", "shooting prisoners",
    "firing squad",
    // killed by a violent act ("a woman strangled to death"); idioms such as "bored to death" or "scared to death" are not listed
    "strangled to death", "hacked to death", "bludgeoned to death", "clubbed to death", "kicked to death", "stoned to death",
    "burned to death", "burnt to death", "choked to death", "mauled to death", "tortured to death", "whipped to death",
  ],
  hate: [
    "nazi propaganda", "nazi flag", "nazi flags", "nazi rally", "nazi salute", "nazi symbol", "nazi symbols", "nazi banner",
    "neo nazi", "neo nazis", "neonazi", "neonazis", "hitler salute", "heil hitler", "sieg heil", "hitler youth", "white power",
    "white pride", "white supremacy", "white supremacist", "white supremacists", "kkk", "ku klux klan", "cross burning", "burning cross",
    "ethnic cleansing", "genocide propaganda", "racial slur", "racist caricature", "racist caricatures", "racist cartoon",
    "racist cartoons", "racist drawing", "racist meme", "racist propaganda", "racist imagery", "racist stereotype",
    "racist stereotypes", "blackface", "antisemitic", "antisemitism", "islamophobic", "homophobic", "transphobic", "hate symbol",
    "master race", "subhuman",
    // the slur by its euphemism and its spelling; the SS runes typed as Greek koppas or runic sowilo letters
    "n word", "nigger", "niggers", "ϟϟ", "ᛋᛋ",
  ],
  intellectual_property: [
    // Disney, Pixar
    "mickey mouse", "minnie mouse", "donald duck", "disney princess", "disney princesses", "disney character",
    "disney characters", "disney s frozen", "elsa from frozen", "buzz lightyear", "winnie the pooh", "pixar", "lilo and stitch",
    // Nintendo, Pokémon, Sega
    "pikachu", "pikachus", "pokemon", "pokemons", "charizard", "pokeball", "poke ball", "super mario", "mario bros", "mario kart", "luigi s mansion",
    "donkey kong", "princess peach", "legend of zelda", "princess zelda", "hyrule", "sonic the hedgehog", "pac man", "pacman",
    // Star Wars, Star Trek, Lord of the Rings, Harry Potter, other film and TV franchises
    "darth vader", "star wars", "luke skywalker", "baby yoda", "yoda", "chewbacca", "stormtrooper", "stormtroopers",
    "lightsaber", "the mandalorian", "star trek", "lord of the rings", "gandalf", "frodo", "game of thrones",
    "harry potter", "hogwarts", "hermione granger", "dumbledore", "voldemort", "james bond", "optimus prime", "shrek",
    // comics: Marvel ("marvel" alone is a word, see rules.ts), DC
    "spiderman", "spider man", "spidey", "mjolnir", "iron man", "captain america", "captain marvel", "ms marvel", "the avengers", "incredible hulk",
    "deadpool", "thanos", "groot", "x men", "batman", "batmobile", "gotham city", "superman", "wonder woman",
    "justice league", "harley quinn", "dc comics",
    // cartoons and anime
    "simpsons", "homer simpson", "bart simpson", "marge simpson", "lisa simpson", "spongebob", "squarepants",
    "rick and morty", "scooby doo", "bugs bunny", "looney tunes", "tom and jerry", "peppa pig", "paw patrol",
    "kermit the frog", "snoopy", "despicable me", "sesame street", "cookie monster", "hello kitty", "goku", "dragon ball", "dragonball", "vegeta", "naruto uzumaki",
    "naruto shippuden", "sasuke uchiha", "luffy", "attack on titan", "totoro", "hatsune miku",
    // brands' logos
    "disney logo", "nike logo", "apple logo", "coca cola logo", "mcdonalds logo", "mcdonald's logo", "nike swoosh", "swoosh logo", "adidas logo",
    "starbucks logo", "google logo", "microsoft logo", "amazon logo", "pepsi logo", "louis vuitton logo", "louis vuitton monogram",
    "lv logo", "lv monogram", "gucci logo", "gucci monogram", "chanel logo",
    "ferrari logo", "lego logo", "mercedes logo", "nintendo logo", "marvel logo",
  ],
  personal_information: [
    // identity documents are in rules.ts: the document as an object is fine, one tied to a person or their details is not
    "social security number", "social security numbers", "ssn", "ssns", "social security card", "credit card number",
    "credit card numbers", "bank account number", "bank account numbers", "home address of", "phone number of", "phone numbers of",
    "medical records of", "fake id", "fake ids",
  ],
};

/**
 * Phrases that contain a listed word and mean something harmless: a colour, a tool, an animal, a flower, a game. They are
 * taken out of the normalized prompt before the terms are matched (the rest of the prompt is still checked).
 */
export const HARMLESS_PHRASES: string[] = [
  "murder of crows", "murder mystery", "murder mysteries", "corpse flower", "corpse flowers", "naked eye", "naked cake",
  "naked cakes", "naked wedding cake", "naked flame", "naked mole rat", "naked mole rats", "white power bank", "white power banks", "white power cable",
  "white power cord", "white power adapter", "white power strip", "white power outlet", "white power supply",
  "oilseed rape", "paint stripper", "wire stripper", "wire strippers", "wallpaper stripper", "varnish stripper", "nude lipstick",
  "nude lip", "nude heels", "nude pumps", "nude shoes", "nude color", "nude colour", "nude colored", "nude coloured",
  "nude tone", "nude tones", "nude shade", "nude shades", "nude palette", "nude makeup", "nude nail", "nude nails",
  "nude nail polish", "nude beige",
  // yoga's savasana, a medical symptom, rifle ammunition clips, school health lessons
  "corpse pose", "stabbing pain", "stabbing pains", "stripper clip", "stripper clips", "sex education", "sex ed",
  // names of historical events: the engraving of the Boston Massacre is in every history book
  "boston massacre", "valentine s day massacre", "peterloo massacre", "glencoe massacre", "massacre of glencoe",
];

/** Patterns on the folded prompt (case and punctuation kept, see normalize.ts): identifiers that are personal data whatever the words around them. */
export const PERSONAL_PATTERNS: Array<{ name: string; pattern: RegExp }> = [
  { name: "social security number", pattern: /\b\d{3}-\d{2}-\d{4}\b/ },
  // The lookbehind starts each local part once: without it "a.a.a.…" (no "@") is rescanned from every position,
  // which takes seconds on a 60 kB prompt.
  { name: "e-mail address", pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/ },
  { name: "phone number", pattern: /(?:\+\d{1,3}[\s.-]?)?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}\b/ },
  // international form: "+" then digits, spaces, dots, dashes and parentheses ("+44 20 7946 0958", "+33 6 12 34 56 78",
  // "+44 (0)20 7946 0958"); policy.ts also asks for 8 to 15 digits in all, as E.164 numbers have. One run of those
  // characters, not groups of 1 to 4 digits with optional separators: a long run of digits splits into such groups
  // in thousands of ways, each retried when the match fails (100 ms per 4 kB prompt).
  { name: "international phone number", pattern: /(?<![\w+])\+\d[\d(). -]*(?<=[\d)])(?!\w)/ },
  { name: "payment card number", pattern: /\b(?:\d[ -]?){13,19}\b/ },
];
