"""Synthetic discharge notes with tagged critical entities, and the readmission label.

A note is a list of sentences; a sentence is a list of parts, each plain text or a `Mention` of a critical entity
(a diagnosis, a medication with its dose, or a vital/lab with its value; diagnoses may be negated) rendered by one of
its surface forms. The ground-truth concept set of any note, original or rewritten, is read off its mentions, so
preservation and hallucination are measured exactly; the expert (`augment.Expert`) only ever sees the text.

The readmission label is a noisy logistic rule over the original note's concepts (heart failure, kidney disease,
COPD, diabetes, a recent fall raise the risk; a beta blocker and an ACE inhibitor lower it; a negated diagnosis
counts for nothing), so a rewrite that drops, swaps or invents a critical entity no longer matches its label.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

# concept -> surface forms (the first is canonical)
DIAGNOSES: dict[str, tuple[str, ...]] = {
    "chf": ("congestive heart failure", "chf", "heart failure", "hfref"),
    "ckd": ("chronic kidney disease", "ckd", "renal insufficiency"),
    "copd": ("copd", "chronic obstructive pulmonary disease", "emphysema"),
    "diabetes": ("diabetes mellitus", "type 2 diabetes", "dm2", "t2dm"),
    "fall": ("recent fall", "fall at home", "mechanical fall"),
    "hypertension": ("hypertension", "htn", "high blood pressure"),
    "afib": ("atrial fibrillation", "afib", "af"),
    "pneumonia": ("pneumonia", "community acquired pneumonia", "cap"),
    "cad": ("coronary artery disease", "cad", "ischemic heart disease"),
    "stroke": ("prior stroke", "cva", "cerebrovascular accident"),
    "anemia": ("anemia", "low hemoglobin"),
    "depression": ("depression", "major depressive disorder", "mdd"),
    "obesity": ("obesity", "morbid obesity"),
    "gerd": ("gerd", "acid reflux", "gastroesophageal reflux"),
    "osteoarthritis": ("osteoarthritis", "degenerative joint disease", "oa"),
    "hypothyroidism": ("hypothyroidism", "underactive thyroid"),
    "uti": ("urinary tract infection", "uti"),
    "cellulitis": ("cellulitis", "skin infection"),
    "asthma": ("asthma", "reactive airway disease"),
    "dementia": ("dementia", "cognitive impairment"),
    "cirrhosis": ("cirrhosis", "liver cirrhosis"),
    "gout": ("gout", "gouty arthritis"),
    "dvt": ("deep vein thrombosis", "dvt"),
    "sepsis": ("sepsis", "septicemia"),
    "migraine": ("migraine", "migraine headaches"),
    "hyperlipidemia": ("hyperlipidemia", "high cholesterol", "hld"),
    "anxiety": ("anxiety", "generalized anxiety disorder"),
    "insomnia": ("insomnia", "sleep disturbance"),
    "bph": ("benign prostatic hyperplasia", "bph"),
    "neuropathy": ("peripheral neuropathy", "neuropathy"),
}
# drug -> (class, surface forms, doses in mg)
DRUGS: dict[str, tuple[str, tuple[str, ...], tuple[int, ...]]] = {
    "metoprolol": ("beta_blocker", ("metoprolol", "lopressor", "toprol"), (25, 50, 100)),
    "carvedilol": ("beta_blocker", ("carvedilol", "coreg"), (6, 12, 25)),
    "bisoprolol": ("beta_blocker", ("bisoprolol", "zebeta"), (5, 10)),
    "lisinopril": ("ace_inhibitor", ("lisinopril", "zestril", "prinivil"), (10, 20, 40)),
    "enalapril": ("ace_inhibitor", ("enalapril", "vasotec"), (5, 10, 20)),
    "ramipril": ("ace_inhibitor", ("ramipril", "altace"), (2, 5, 10)),
    "furosemide": ("diuretic", ("furosemide", "lasix"), (20, 40, 80)),
    "torsemide": ("diuretic", ("torsemide", "demadex"), (10, 20)),
    "metformin": ("other", ("metformin", "glucophage"), (500, 1000)),
    "insulin": ("other", ("insulin glargine", "lantus"), (10, 20, 30)),
    "atorvastatin": ("other", ("atorvastatin", "lipitor"), (20, 40, 80)),
    "simvastatin": ("other", ("simvastatin", "zocor"), (20, 40)),
    "aspirin": ("other", ("aspirin", "asa"), (81, 325)),
    "clopidogrel": ("other", ("clopidogrel", "plavix"), (75,)),
    "warfarin": ("other", ("warfarin", "coumadin"), (2, 5)),
    "apixaban": ("other", ("apixaban", "eliquis"), (2, 5)),
    "amlodipine": ("other", ("amlodipine", "norvasc"), (5, 10)),
    "omeprazole": ("other", ("omeprazole", "prilosec"), (20, 40)),
    "pantoprazole": ("other", ("pantoprazole", "protonix"), (40,)),
    "levothyroxine": ("other", ("levothyroxine", "synthroid"), (50, 75, 100)),
    "sertraline": ("other", ("sertraline", "zoloft"), (50, 100)),
    "albuterol": ("other", ("albuterol", "proventil"), (2, 4)),
    "tiotropium": ("other", ("tiotropium", "spiriva"), (18,)),
    "prednisone": ("other", ("prednisone", "deltasone"), (10, 20, 40)),
    "gabapentin": ("other", ("gabapentin", "neurontin"), (100, 300)),
    "allopurinol": ("other", ("allopurinol", "zyloprim"), (100, 300)),
    "tamsulosin": ("other", ("tamsulosin", "flomax"), (0,)),
    "donepezil": ("other", ("donepezil", "aricept"), (5, 10)),
    "trazodone": ("other", ("trazodone", "desyrel"), (50, 100)),
    "ceftriaxone": ("other", ("ceftriaxone", "rocephin"), (1000,)),
    "vancomycin": ("other", ("vancomycin", "vanco"), (1000,)),
    "spironolactone": ("other", ("spironolactone", "aldactone"), (25, 50)),
    "hydralazine": ("other", ("hydralazine", "apresoline"), (25, 50)),
    "digoxin": ("other", ("digoxin", "lanoxin"), (0,)),
    "potassium": ("other", ("potassium chloride", "kcl"), (20, 40)),
    "montelukast": ("other", ("montelukast", "singulair"), (10,)),
    "ondansetron": ("other", ("ondansetron", "zofran"), (4, 8)),
    "oxycodone": ("other", ("oxycodone", "roxicodone"), (5, 10)),
    "acetaminophen": ("other", ("acetaminophen", "tylenol"), (500, 650)),
    "heparin": ("other", ("heparin sq", "subcutaneous heparin"), (5000,)),
}
VITALS: dict[str, tuple[tuple[str, ...], tuple[int, int]]] = {
    "heart_rate": (("heart rate", "hr", "pulse"), (55, 120)),
    "systolic_bp": (("systolic bp", "sbp", "systolic pressure"), (90, 180)),
    "resp_rate": (("respiratory rate", "rr"), (12, 28)),
    "spo2": (("oxygen saturation", "spo2", "o2 sat"), (86, 100)),
    "creatinine": (("creatinine", "cr", "serum creatinine"), (1, 4)),
    "bnp": (("bnp", "brain natriuretic peptide"), (100, 1500)),
}
# readmission logit weights over concepts (drug classes for medications)
WEIGHTS = {"chf": 2.0, "ckd": 1.5, "copd": 1.5, "diabetes": 1.0, "fall": 1.2, "beta_blocker": -1.5,
           "ace_inhibitor": -1.2}
BIAS = -1.6
DX_PRIOR = {name: 3.0 for name in ("chf", "ckd", "copd", "diabetes", "fall")}  # risk diagnoses are common
DRUG_PRIOR = {"beta_blocker": 2.5, "ace_inhibitor": 2.5}
LABEL_NOISE = 0.3  # scale of the logistic noise on the logit

NEGATION_CUES = ("no", "denies", "negative for", "without", "no history of")
FILLER = (
    "patient ambulating in the hallway .", "family at bedside and updated .", "tolerating a regular diet .",
    "seen by physical therapy today .", "afebrile overnight .", "pain controlled on current regimen .",
    "social work consulted for discharge planning .", "discussed plan with the patient .",
    "lives alone in an apartment .", "code status full code .",
)
# plain-text connectors and their paraphrases (the generalist's synonym pool for non-clinical words)
PHRASES: dict[str, tuple[str, ...]] = {
    "admitted with": ("admitted with", "presented with", "came in with", "hospitalized for"),
    "history of": ("history of", "past history significant for", "known", "with a background of"),
    "discharged on": ("discharged on", "home medications include", "continued on", "to continue"),
    "vitals notable for": ("vitals notable for", "on exam", "vital signs showed", "measured"),
    "also has": ("also has", "additionally carries a diagnosis of", "comorbid", "also known for"),
}


@dataclass(frozen=True)
class Mention:
    kind: str  # dx | drug | vital
    concept: str
    value: int | None
    negated: bool
    surface: int  # index of the surface form

    def key(self) -> tuple[str, str, int | None, bool]:
        """The normalised concept (what preservation compares): kind, concept, value, negation."""
        return (self.kind, self.concept, self.value, self.negated)

    def text(self) -> str:
        if self.kind == "dx":
            return DIAGNOSES[self.concept][self.surface]
        if self.kind == "drug":
            name = DRUGS[self.concept][1][self.surface]
            return f"{name} {self.value} mg" if self.value else name
        return f"{VITALS[self.concept][0][self.surface]} {self.value}"

    def forms(self) -> int:
        if self.kind == "dx":
            return len(DIAGNOSES[self.concept])
        if self.kind == "drug":
            return len(DRUGS[self.concept][1])
        return len(VITALS[self.concept][0])


Part = str | Mention
Sentence = tuple[Part, ...]


@dataclass(frozen=True)
class Note:
    sentences: tuple[Sentence, ...]
    label: int

    def text(self) -> str:
        return " ".join(" ".join(p if isinstance(p, str) else p.text() for p in s) for s in self.sentences)

    def mentions(self) -> list[Mention]:
        return [p for s in self.sentences for p in s if isinstance(p, Mention)]

    def concepts(self) -> set[tuple[str, str, int | None, bool]]:
        return {m.key() for m in self.mentions()}


def risk_logit(concepts: set[tuple[str, str, int | None, bool]]) -> float:
    """The label rule's logit: positive diagnoses and drug classes, weighted."""
    present = {c for kind, c, _, negated in concepts if kind == "dx" and not negated}
    present |= {DRUGS[c][0] for kind, c, _, _ in concepts if kind == "drug"}
    return BIAS + sum(w for name, w in WEIGHTS.items() if name in present)


def _list(rng: np.random.Generator, items: list[Mention]) -> list[Part]:
    parts: list[Part] = []
    for i, m in enumerate(items):
        parts.append(m)
        parts.append("," if i < len(items) - 1 else ".")
    return parts


def make_note(rng: np.random.Generator) -> Note:
    """One discharge note: admission reason, history (some negated), medications with doses, vitals, filler."""
    dx = list(DIAGNOSES)
    # the risk concepts are common, so the label carries signal; others are distractors
    weights = np.array([DX_PRIOR.get(d, 1.0) for d in dx])
    chosen = rng.choice(len(dx), size=int(rng.integers(2, 6)), replace=False, p=weights / weights.sum())
    diagnoses = [Mention("dx", dx[i], None, False, int(rng.integers(len(DIAGNOSES[dx[i]])))) for i in chosen]
    negated_pool = [d for d in dx if d not in {m.concept for m in diagnoses}]
    negated = [Mention("dx", negated_pool[i], None, True, int(rng.integers(len(DIAGNOSES[negated_pool[i]]))))
               for i in rng.choice(len(negated_pool), size=int(rng.integers(0, 3)), replace=False)]
    names = list(DRUGS)
    drug_w = np.array([DRUG_PRIOR.get(DRUGS[d][0], 1.0) for d in names])
    drugs = [Mention("drug", names[i], int(rng.choice(DRUGS[names[i]][2])), False,
                     int(rng.integers(len(DRUGS[names[i]][1]))))
             for i in rng.choice(len(names), size=int(rng.integers(2, 6)), replace=False, p=drug_w / drug_w.sum())]
    vital_names = list(VITALS)
    vitals = [Mention("vital", vital_names[i], int(rng.integers(*VITALS[vital_names[i]][1])), False,
                      int(rng.integers(len(VITALS[vital_names[i]][0]))))
              for i in rng.choice(len(vital_names), size=int(rng.integers(2, 4)), replace=False)]
    age = int(rng.integers(45, 92))
    sentences: list[Sentence] = [
        (f"{age} year old {'man' if rng.random() < 0.5 else 'woman'}", "admitted with", diagnoses[0], "."),
    ]
    if len(diagnoses) > 1:
        sentences.append(("history of", *_list(rng, diagnoses[1:])))
    for m in negated:
        cue = NEGATION_CUES[int(rng.integers(len(NEGATION_CUES)))]
        sentences.append((cue, m, "."))
    sentences.append(("discharged on", *_list(rng, drugs)))
    sentences.append(("vitals notable for", *_list(rng, vitals)))
    for i in rng.choice(len(FILLER), size=int(rng.integers(1, 4)), replace=False):
        sentences.insert(int(rng.integers(1, len(sentences) + 1)), (FILLER[i],))
    draft = Note(tuple(sentences), 0)
    logit = risk_logit(draft.concepts()) + LABEL_NOISE * float(rng.logistic())
    return replace(draft, label=int(logit > 0))


def make_notes(seed: int | list[int], n: int) -> list[Note]:
    rng = np.random.default_rng(seed)
    return [make_note(rng) for _ in range(n)]
