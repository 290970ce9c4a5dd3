//! The one error type every fallible call in the workspace returns.
//!
//! An [`Error`] is a [`Code`] (what kind of failure, so callers can branch on it) plus
//! a message written for the person who has to fix the input. Codes mirror the
//! status codes XLA and StreamExecutor use, so a message that crosses from one world
//! to the other keeps its meaning.

use std::fmt;

/// What kind of failure an [`Error`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// The caller passed something malformed: bad HLO text, a shape mismatch, a wrong
    /// argument count.
    InvalidArgument,
    /// A named thing (platform, computation, custom-call target, file) does not exist.
    NotFound,
    /// Something with that name or key already exists (duplicate registration).
    AlreadyExists,
    /// The request is well formed but this platform or build does not do it.
    Unimplemented,
    /// Memory or another finite resource ran out.
    ResourceExhausted,
    /// The system is not in a state where the call can work (device unavailable,
    /// platform missing its compiler, executor not initialised).
    FailedPrecondition,
    /// An index or count outside the allowed range (conditional branch index, step limit).
    OutOfRange,
    /// The operation was cancelled or timed out.
    DeadlineExceeded,
    /// The backend could not be reached (driver missing, device lost).
    Unavailable,
    /// A bug: an invariant of ours was broken. Never the user's fault.
    Internal,
}

impl Code {
    /// The status-code spelling XLA uses (`INVALID_ARGUMENT`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Code::Unavailable => "UNAVAILABLE",
            Code::Internal => "INTERNAL",
        }
    }
}

/// A failure with a code and a message a user can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: Code,
    message: String,
}

/// The workspace-wide result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }
    pub fn code(&self) -> Code {
        self.code
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    /// Prefixes the message with where the failure happened (`while running %add.3: ...`),
    /// keeping the code.
    pub fn context(self, what: impl fmt::Display) -> Self {
        Error {
            code: self.code,
            message: format!("{what}: {}", self.message),
        }
    }
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidArgument, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(Code::NotFound, message)
    }
    pub fn already_exists(message: impl Into<String>) -> Self {
        Self::new(Code::AlreadyExists, message)
    }
    pub fn unimplemented(message: impl Into<String>) -> Self {
        Self::new(Code::Unimplemented, message)
    }
    pub fn resource_exhausted(message: impl Into<String>) -> Self {
        Self::new(Code::ResourceExhausted, message)
    }
    pub fn failed_precondition(message: impl Into<String>) -> Self {
        Self::new(Code::FailedPrecondition, message)
    }
    pub fn out_of_range(message: impl Into<String>) -> Self {
        Self::new(Code::OutOfRange, message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(Code::Unavailable, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Code::Internal, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        let code = match e.kind() {
            std::io::ErrorKind::NotFound => Code::NotFound,
            std::io::ErrorKind::InvalidData | std::io::ErrorKind::InvalidInput => {
                Code::InvalidArgument
            }
            _ => Code::Unavailable,
        };
        Error::new(code, e.to_string())
    }
}

/// Returns early with an [`Error`] of the given code, formatting the message.
///
/// `bail!(InvalidArgument, "shape {} has {} dims", s, n)`
#[macro_export]
macro_rules! bail {
    ($code:ident, $($arg:tt)*) => {
        return Err($crate::Error::new($crate::Code::$code, format!($($arg)*)))
    };
}

/// Returns early with an [`Error`] unless the condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $code:ident, $($arg:tt)*) => {
        if !$cond {
            $crate::bail!($code, $($arg)*);
        }
    };
}
