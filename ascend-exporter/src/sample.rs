//! Samples that metric extractors produce: a value plus up to four labels of their own.

/// A label value: static text, a number (formatted while encoding), or owned text.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelText {
    /// Text known at compile time.
    Static(&'static str),
    /// An integer.
    Int(i64),
    /// Text built at run time.
    Owned(String),
}

impl Default for LabelText {
    fn default() -> Self {
        LabelText::Static("")
    }
}

impl From<&'static str> for LabelText {
    fn from(text: &'static str) -> Self {
        LabelText::Static(text)
    }
}

impl From<String> for LabelText {
    fn from(text: String) -> Self {
        LabelText::Owned(text)
    }
}

/// The most labels one sample adds to its series' common labels.
pub const MAX_SAMPLE_LABELS: usize = 4;

/// One value of a metric, with the labels that tell it apart from the metric's other values on the same series.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sample {
    labels: [(&'static str, LabelText); MAX_SAMPLE_LABELS],
    label_count: usize,
    /// The value in the metric's unit.
    pub value: f64,
}

impl Sample {
    /// The sample's own labels.
    pub fn labels(&self) -> &[(&'static str, LabelText)] {
        &self.labels[..self.label_count]
    }
}

/// Collects the samples one extractor produces for one chip, container or machine.
#[derive(Debug, Default)]
pub struct SampleSink {
    samples: Vec<Sample>,
}

impl SampleSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// A value without labels of its own.
    pub fn push(&mut self, value: f64) {
        self.samples.push(Sample { value, ..Sample::default() });
    }

    /// A value with a run-time number of labels of its own (at most [`MAX_SAMPLE_LABELS`], as
    /// [`push_labeled`](Self::push_labeled)).
    pub fn push_labels(&mut self, labels: &[(&'static str, LabelText)], value: f64) {
        debug_assert!(labels.len() <= MAX_SAMPLE_LABELS, "a catalogue entry adds {} labels", labels.len());
        let mut sample = Sample { value, ..Sample::default() };
        for (slot, label) in sample.labels.iter_mut().zip(labels) {
            *slot = label.clone();
        }
        sample.label_count = labels.len().min(MAX_SAMPLE_LABELS);
        self.samples.push(sample);
    }

    /// A value with labels of its own; labels beyond [`MAX_SAMPLE_LABELS`] are a bug in the catalogue and dropped
    /// (a debug build asserts).
    pub fn push_labeled<const N: usize>(&mut self, labels: [(&'static str, LabelText); N], value: f64) {
        debug_assert!(N <= MAX_SAMPLE_LABELS, "a catalogue entry adds {N} labels");
        let mut sample = Sample { value, ..Sample::default() };
        for (slot, label) in sample.labels.iter_mut().zip(labels) {
            *slot = label;
        }
        sample.label_count = N.min(MAX_SAMPLE_LABELS);
        self.samples.push(sample);
    }

    /// A boolean as 1 or 0.
    pub fn push_bool(&mut self, value: bool) {
        self.push(if value { 1.0 } else { 0.0 });
    }

    /// The samples pushed since the last [`clear`](Self::clear).
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// Forgets the samples, keeping the room they took.
    pub fn clear(&mut self) {
        self.samples.clear();
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labeled_samples_keep_their_labels_in_order() {
        let mut sink = SampleSink::new();
        sink.push_labeled([("kind", "aicore".into()), ("pid", LabelText::Int(42))], 0.5);
        sink.push_bool(true);
        let samples: Vec<Sample> = sink.samples().to_vec();
        sink.clear();
        assert_eq!(samples[0].labels(), &[("kind", LabelText::Static("aicore")), ("pid", LabelText::Int(42))]);
        assert_eq!(samples[0].value, 0.5);
        assert!(samples[1].labels().is_empty());
        assert_eq!(samples[1].value, 1.0);
        assert!(sink.is_empty());
    }
}
