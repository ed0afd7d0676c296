//! The part of SUNDIALS 6.x's C interface that [`super::Ida`] uses, declared by hand from
//! the installed headers (`ida/ida.h`, `ida/ida_ls.h`, `nvector/nvector_serial.h`,
//! `sunmatrix/sunmatrix_dense.h`, `sunlinsol/sunlinsol_dense.h`; SUNDIALS 6.4.1 as
//! Debian packages it: `sunrealtype = double`, `sunindextype = int64_t`), and the owners
//! that free what SUNDIALS allocates.
//!
//! Every SUNDIALS object here is an opaque pointer, so no struct layout is mirrored.
//! Debian's `libsundials_ida.so.6` carries the serial vector, the dense matrix and the
//! dense linear solver in the same library; `build.rs` links it by that file name (or by
//! `SUNDIALS_IDA_LIB`), so that the runtime package alone is enough.

use std::ffi::{c_char, c_int, c_long, c_void};

/// `sunindextype` of the Debian build (`SUNDIALS_INDEX_TYPE int64_t`).
pub type Index = i64;
/// Opaque `N_Vector`.
pub type NVector = *mut c_void;
/// Opaque `SUNContext`.
pub type Context = *mut c_void;
/// `IDAResFn`: `F(t, y, y') → r`; 0 success, > 0 recoverable, < 0 fatal.
pub type ResFn = extern "C" fn(f64, NVector, NVector, NVector, *mut c_void) -> c_int;
/// `IDAEwtFn`: the error weights `ewt` at `y`; 0 success, non-zero failure.
pub type EwtFn = extern "C" fn(NVector, NVector, *mut c_void) -> c_int;
/// `IDAErrHandlerFn`.
pub type ErrFn = extern "C" fn(c_int, *const c_char, *const c_char, *mut c_char, *mut c_void);

/// `IDA_ONE_STEP`: return after one internal step.
pub const ONE_STEP: c_int = 2;
/// `IDA_TSTOP_RETURN`: the step ended on the stop time.
pub const TSTOP_RETURN: c_int = 1;

extern "C" {
    pub fn SUNContext_Create(comm: *mut c_void, ctx: *mut Context) -> c_int;
    pub fn SUNContext_Free(ctx: *mut Context) -> c_int;
    pub fn N_VNew_Serial(length: Index, ctx: Context) -> NVector;
    pub fn N_VDestroy(v: NVector);
    pub fn N_VGetArrayPointer(v: NVector) -> *mut f64;
    pub fn N_VGetLength(v: NVector) -> Index;
    pub fn SUNDenseMatrix(rows: Index, cols: Index, ctx: Context) -> *mut c_void;
    pub fn SUNMatDestroy(a: *mut c_void);
    pub fn SUNLinSol_Dense(y: NVector, a: *mut c_void, ctx: Context) -> *mut c_void;
    pub fn SUNLinSolFree(s: *mut c_void) -> c_int;
    pub fn IDACreate(ctx: Context) -> *mut c_void;
    pub fn IDAFree(mem: *mut *mut c_void);
    pub fn IDAInit(mem: *mut c_void, res: ResFn, t0: f64, y0: NVector, yp0: NVector) -> c_int;
    pub fn IDAWFtolerances(mem: *mut c_void, efun: EwtFn) -> c_int;
    pub fn IDAGetCurrentStep(mem: *mut c_void, h: *mut f64) -> c_int;
    pub fn IDASetUserData(mem: *mut c_void, data: *mut c_void) -> c_int;
    pub fn IDASetErrHandlerFn(mem: *mut c_void, f: ErrFn, data: *mut c_void) -> c_int;
    pub fn IDASetId(mem: *mut c_void, id: NVector) -> c_int;
    pub fn IDASetSuppressAlg(mem: *mut c_void, suppress: c_int) -> c_int;
    pub fn IDASetMaxOrd(mem: *mut c_void, order: c_int) -> c_int;
    pub fn IDASetStopTime(mem: *mut c_void, t: f64) -> c_int;
    pub fn IDASetInitStep(mem: *mut c_void, h: f64) -> c_int;
    pub fn IDASetMaxStep(mem: *mut c_void, h: f64) -> c_int;
    pub fn IDASetMaxNumSteps(mem: *mut c_void, n: c_long) -> c_int;
    pub fn IDAReInit(mem: *mut c_void, t0: f64, y0: NVector, yp0: NVector) -> c_int;
    pub fn IDASetLinearSolver(mem: *mut c_void, ls: *mut c_void, a: *mut c_void) -> c_int;
    pub fn IDASolve(
        mem: *mut c_void, tout: f64, tret: *mut f64, y: NVector, yp: NVector, task: c_int,
    ) -> c_int;
    pub fn IDAGetNumSteps(mem: *mut c_void, n: *mut c_long) -> c_int;
    pub fn IDAGetNumNonlinSolvIters(mem: *mut c_void, n: *mut c_long) -> c_int;
    pub fn IDAGetNumNonlinSolvConvFails(mem: *mut c_void, n: *mut c_long) -> c_int;
    pub fn IDAGetNumErrTestFails(mem: *mut c_void, n: *mut c_long) -> c_int;
    pub fn IDAGetNumLinSolvSetups(mem: *mut c_void, n: *mut c_long) -> c_int;
    pub fn IDAGetNumJacEvals(mem: *mut c_void, n: *mut c_long) -> c_int;
    pub fn IDAGetNumResEvals(mem: *mut c_void, n: *mut c_long) -> c_int;
    pub fn IDAGetReturnFlagName(flag: c_long) -> *mut c_char;
    fn free(p: *mut c_void);
}

/// A serial `N_Vector` of SUNDIALS, owned (destroyed on drop).
pub struct Vector(NVector);

impl Vector {
    /// A vector of length `n` in context `ctx`, or `None` when SUNDIALS cannot allocate.
    pub fn new(n: usize, ctx: Context) -> Option<Self> {
        // SAFETY: `ctx` is a live context (owned by `Session`, which outlives the vector).
        let v = unsafe { N_VNew_Serial(n as Index, ctx) };
        (!v.is_null()).then_some(Self(v))
    }
    /// The raw handle.
    pub fn raw(&self) -> NVector {
        self.0
    }
    /// The values.
    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        // SAFETY: a serial vector owns `N_VGetLength` contiguous doubles.
        unsafe { slice_of(self.0) }
    }
}

impl Drop for Vector {
    fn drop(&mut self) {
        // SAFETY: created by `N_VNew_Serial`, destroyed once.
        unsafe { N_VDestroy(self.0) }
    }
}

/// The values of a serial `N_Vector` handed to a callback.
///
/// # Safety
/// `v` must be a live serial vector, not aliased mutably elsewhere for the lifetime `'a`.
pub unsafe fn slice_of<'a>(v: NVector) -> &'a mut [f64] {
    let n = N_VGetLength(v) as usize;
    std::slice::from_raw_parts_mut(N_VGetArrayPointer(v), n)
}

/// A counter of IDA (`IDAGetNum…`), 0 when the query fails.
pub fn counter(
    mem: *mut c_void, get: unsafe extern "C" fn(*mut c_void, *mut c_long) -> c_int,
) -> usize {
    let mut n: c_long = 0;
    // SAFETY: `mem` is a live IDA memory block; `n` is a valid out-pointer.
    let flag = unsafe { get(mem, &mut n) };
    if flag == 0 {
        n.max(0) as usize
    } else {
        0
    }
}

/// IDA's name of a return flag (e.g. `IDA_CONV_FAIL`).
pub fn flag_name(flag: c_int) -> String {
    // SAFETY: IDA returns a NUL-terminated string from `malloc`, which the caller frees.
    unsafe {
        let p = IDAGetReturnFlagName(flag as c_long);
        if p.is_null() {
            return format!("IDA flag {flag}");
        }
        let name = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
        free(p.cast());
        name
    }
}
