//! One IDA integration: the SUNDIALS objects, freed in the right order, and the calls
//! that advance it. Everything `unsafe` of the `ida` method is in this file and `ffi.rs`.

use super::ffi::{self, Context, NVector, Vector};
use super::formulation::{ErrorTest, Formulation};
use driftlab_core::prelude::*;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// IDA's cumulative counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Internal steps.
    pub steps: usize,
    /// Newton iterations.
    pub newton_iterations: usize,
    /// Newton convergence failures (each retried with a smaller step).
    pub newton_failures: usize,
    /// Error-test failures (rejected steps).
    pub error_test_failures: usize,
    /// Linear-solver setups: Jacobian (difference quotients) and dense LU.
    pub setups: usize,
    /// Jacobian evaluations.
    pub jacobians: usize,
    /// Residual evaluations (Newton and difference quotients).
    pub residuals: usize,
}

/// What IDA's callbacks read, at a fixed heap address for the whole integration (IDA
/// hands the error-weight function the user data it saw at its first step).
struct Shared {
    /// The system, set for the duration of one `IDASolve` and cleared after it.
    sys: Option<*const (dyn MechanicalSystem + 'static)>,
    form: Formulation,
    tol: Tolerances,
    /// Step IDA will try next (for the index scaling of the tolerances).
    h: f64,
    index_scaling: bool,
    atol: Vec<f64>,
    /// IDA's last error message.
    message: String,
}

/// IDA's residual callback: `F(t, y, y')` of the formulation; a non-finite residual is a
/// recoverable failure (IDA retries with a smaller step), a panic a fatal one.
extern "C" fn residual(t: f64, y: NVector, yp: NVector, r: NVector, data: *mut c_void) -> c_int {
    let run = || {
        // SAFETY: `data` is the session's boxed `Shared`; `sys` is set only while
        // `Session::advance` holds the reference it came from; `y`, `yp`, `r` are
        // distinct live serial vectors of IDA.
        let (shared, y, yp, r) = unsafe {
            (
                &mut *data.cast::<Shared>(),
                ffi::slice_of(y),
                ffi::slice_of(yp),
                ffi::slice_of(r),
            )
        };
        let Some(sys) = shared.sys else { return -1 };
        // SAFETY: see above.
        let sys = unsafe { &*sys };
        shared.form.residual(sys, t, y, yp, r);
        c_int::from(!r.iter().all(|x| x.is_finite()))
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or(-1)
}

/// IDA's error weights `1/(rtol |y_i| + atol_i)`, with `atol_i` scaled by the index
/// ([`Formulation::index_scaled_atol`]) when asked.
extern "C" fn error_weights(y: NVector, ewt: NVector, data: *mut c_void) -> c_int {
    let run = || {
        // SAFETY: as in `residual`; `y` and `ewt` are distinct live vectors.
        let (shared, y, ewt) = unsafe {
            (
                &mut *data.cast::<Shared>(),
                ffi::slice_of(y),
                ffi::slice_of(ewt),
            )
        };
        let (rtol, atol) = (shared.tol.rtol, shared.tol.atol);
        let h = if shared.index_scaling { shared.h } else { 1.0 };
        shared.form.index_scaled_atol(atol, h, &mut shared.atol);
        for ((w, yi), a) in ewt.iter_mut().zip(y.iter()).zip(&shared.atol) {
            *w = 1.0 / (rtol * yi.abs() + a);
        }
        c_int::from(!ewt.iter().all(|w| w.is_finite() && *w > 0.0))
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or(-1)
}

/// IDA's error handler: keeps the last message (instead of printing it to stderr).
extern "C" fn keep_message(
    _code: c_int, _module: *const c_char, function: *const c_char, msg: *mut c_char,
    data: *mut c_void,
) {
    // SAFETY: `data` is the session's boxed `Shared` (no other reference to it is live
    // while IDA reports an error); IDA passes NUL-terminated strings.
    unsafe {
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        (*data.cast::<Shared>()).message = format!("{} ({})", text(msg), text(function));
    }
}

/// The SUNDIALS context, freed last (it is the last field of [`Session`]).
struct OwnedContext(Context);

impl Drop for OwnedContext {
    fn drop(&mut self) {
        // SAFETY: created by `SUNContext_Create`, freed once, after every object using it.
        unsafe {
            ffi::SUNContext_Free(&mut self.0);
        }
    }
}

/// One IDA integration.
pub struct Session {
    mem: *mut c_void,
    matrix: *mut c_void,
    solver: *mut c_void,
    shared: Box<Shared>,
    y: Vector,
    yp: Vector,
    id: Vector,
    _ctx: OwnedContext,
}

// SAFETY: the SUNDIALS objects are owned by this value alone and used by one thread at a
// time (`&mut self`); nothing in them is tied to the creating thread.
unsafe impl Send for Session {}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: each object was created once by `Session::new` and is freed once here;
        // the vectors and the context are freed after (field order).
        unsafe {
            ffi::IDAFree(&mut self.mem);
            ffi::SUNLinSolFree(self.solver);
            ffi::SUNMatDestroy(self.matrix);
        }
    }
}

/// Settings of a session.
pub struct Settings {
    /// Error-test tolerances.
    pub tol: Tolerances,
    /// Components in the error test.
    pub error_test: ErrorTest,
    /// Largest BDF order (1–5).
    pub max_order: u8,
    /// First step (0: IDA's own estimate from `y'₀`) and largest step (0: none).
    pub h0: f64,
    /// Largest step (0: none).
    pub h_max: f64,
    /// Absolute tolerances scaled by the index before every step
    /// ([`Formulation::index_scaled_atol`]).
    pub index_scaling: bool,
}

fn check(flag: c_int, call: &str, t: f64, message: &str) -> Result<(), StepError> {
    if flag >= 0 {
        return Ok(());
    }
    Err(StepError::External {
        solver: "IDA",
        t,
        flag: ffi::flag_name(flag),
        message: if message.is_empty() {
            format!("{call} returned {flag}")
        } else {
            format!("{call}: {message}")
        },
    })
}

fn out_of_memory(t: f64, what: &str) -> StepError {
    StepError::External {
        solver: "IDA",
        t,
        flag: "IDA_MEM_FAIL".into(),
        message: format!("SUNDIALS could not allocate {what}"),
    }
}

impl Session {
    /// IDA set up on `form` from the consistent state `s`.
    pub fn new(form: Formulation, s: &State, set: &Settings) -> Result<Self, StepError> {
        let t = s.t;
        let mut ctx: Context = std::ptr::null_mut();
        // SAFETY: `ctx` is a valid out-pointer; a null communicator is the serial case.
        if unsafe { ffi::SUNContext_Create(std::ptr::null_mut(), &mut ctx) } != 0 {
            return Err(out_of_memory(t, "a context"));
        }
        let ctx = OwnedContext(ctx);
        let n = form.dim();
        let vector = || Vector::new(n, ctx.0).ok_or_else(|| out_of_memory(t, "a vector"));
        let (mut y, mut yp, mut id) = (vector()?, vector()?, vector()?);
        form.start(s, y.as_mut_slice(), yp.as_mut_slice());
        id.as_mut_slice()
            .copy_from_slice(&form.error_weights(set.error_test));
        // SAFETY: `ctx` is live; null results are checked below.
        let (mem, matrix) = unsafe {
            (
                ffi::IDACreate(ctx.0),
                ffi::SUNDenseMatrix(n as ffi::Index, n as ffi::Index, ctx.0),
            )
        };
        // SAFETY: `y` and `matrix` are live objects of this context.
        let solver = unsafe { ffi::SUNLinSol_Dense(y.raw(), matrix, ctx.0) };
        let mut session = Session {
            mem,
            matrix,
            solver,
            shared: Box::new(Shared {
                message: String::new(),
                sys: None,
                atol: vec![0.0; n],
                form,
                tol: set.tol,
                h: set.h0.max(0.0),
                index_scaling: set.index_scaling,
            }),
            y,
            yp,
            id,
            _ctx: ctx,
        };
        if mem.is_null() || matrix.is_null() || solver.is_null() {
            return Err(out_of_memory(t, "the integrator"));
        }
        session.configure(t, set)?;
        Ok(session)
    }

    /// `IDAInit` and the options.
    fn configure(&mut self, t: f64, set: &Settings) -> Result<(), StepError> {
        let mem = self.mem;
        let suppress = c_int::from(self.shared.form.resolve(set.error_test) != ErrorTest::All);
        let shared: *mut Shared = &mut *self.shared;
        // SAFETY: every handle is live and owned by `self`; `shared` points into a box
        // that lives as long as `mem`.
        let flags = unsafe {
            [
                (
                    ffi::IDASetErrHandlerFn(mem, keep_message, shared.cast()),
                    "IDASetErrHandlerFn",
                ),
                (
                    ffi::IDAInit(mem, residual, t, self.y.raw(), self.yp.raw()),
                    "IDAInit",
                ),
                (ffi::IDASetUserData(mem, shared.cast()), "IDASetUserData"),
                (ffi::IDAWFtolerances(mem, error_weights), "IDAWFtolerances"),
                (ffi::IDASetId(mem, self.id.raw()), "IDASetId"),
                (ffi::IDASetSuppressAlg(mem, suppress), "IDASetSuppressAlg"),
                (
                    ffi::IDASetMaxOrd(mem, c_int::from(set.max_order)),
                    "IDASetMaxOrd",
                ),
                (ffi::IDASetMaxNumSteps(mem, 1_000_000), "IDASetMaxNumSteps"),
                (ffi::IDASetInitStep(mem, set.h0), "IDASetInitStep"),
                (ffi::IDASetMaxStep(mem, set.h_max), "IDASetMaxStep"),
                (
                    ffi::IDASetLinearSolver(mem, self.solver, self.matrix),
                    "IDASetLinearSolver",
                ),
            ]
        };
        for (flag, call) in flags {
            check(flag, call, t, &self.shared.message)?;
        }
        Ok(())
    }

    /// Advance from `t` towards `t_out`: one internal step that does not pass `t_out`
    /// (`one_step`), or as many as needed to reach `t_out`, interpolated there. Returns
    /// the time reached and writes the state.
    pub fn advance(
        &mut self, sys: &dyn MechanicalSystem, t: f64, t_out: f64, one_step: bool,
        state: &mut State,
    ) -> Result<f64, StepError> {
        let mut h = 0.0;
        // SAFETY: live IDA memory; `h` is a valid out-pointer.
        if unsafe { ffi::IDAGetCurrentStep(self.mem, &mut h) } == 0 && h > 0.0 {
            self.shared.h = h;
        }
        // SAFETY: only the lifetime is erased; the pointer is cleared below, before the
        // reference it came from can end, and IDA calls back only inside `IDASolve`.
        let erased: &'static dyn MechanicalSystem = unsafe { std::mem::transmute(sys) };
        self.shared.sys = Some(erased);
        let mut t_reached = t;
        let task = if one_step { ffi::ONE_STEP } else { 1 };
        // SAFETY: live handles owned by `self`.
        let flags = unsafe {
            let stop = if one_step {
                ffi::IDASetStopTime(self.mem, t_out)
            } else {
                0
            };
            let solve = ffi::IDASolve(
                self.mem,
                t_out,
                &mut t_reached,
                self.y.raw(),
                self.yp.raw(),
                task,
            );
            [(stop, "IDASetStopTime"), (solve, "IDASolve")]
        };
        self.shared.sys = None;
        for (flag, call) in flags {
            check(flag, call, t, &self.shared.message)?;
        }
        let (y, yp) = (self.y.as_mut_slice(), self.yp.as_mut_slice());
        self.shared.form.unpack(y, yp, state);
        // On its stop time IDA returns `t_out` up to its round-off (4ε|t|): report the
        // time asked for, so that the loop does not offer a step of that round-off next.
        Ok(if flags[1].0 == ffi::TSTOP_RETURN {
            t_out
        } else {
            t_reached
        })
    }

    /// Restart from a state changed from outside (a projection decorator).
    pub fn restart(&mut self, s: &State) -> Result<(), StepError> {
        self.shared
            .form
            .start(s, self.y.as_mut_slice(), self.yp.as_mut_slice());
        // SAFETY: live handles owned by `self`.
        let flag = unsafe { ffi::IDAReInit(self.mem, s.t, self.y.raw(), self.yp.raw()) };
        check(flag, "IDAReInit", s.t, &self.shared.message)
    }

    /// The cumulative counters.
    pub fn counts(&self) -> Counts {
        let get = |f| ffi::counter(self.mem, f);
        Counts {
            steps: get(ffi::IDAGetNumSteps),
            newton_iterations: get(ffi::IDAGetNumNonlinSolvIters),
            newton_failures: get(ffi::IDAGetNumNonlinSolvConvFails),
            error_test_failures: get(ffi::IDAGetNumErrTestFails),
            setups: get(ffi::IDAGetNumLinSolvSetups),
            jacobians: get(ffi::IDAGetNumJacEvals),
            residuals: get(ffi::IDAGetNumResEvals),
        }
    }
}
