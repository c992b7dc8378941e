! river_emul.F90 - submodule river_emul_impl of module river: the emulation
! tools of river/throttle.h, each an opaque handle around a c_ptr: token
! buckets that pace work to a byte rate (river_throttle), parsed
! perturbation specs giving rate factors over time (river_perturb), and
! a thread stealing part of a core (river_cpu_hog).
submodule (river) river_emul_impl
  implicit none

  interface
    ! river/throttle.h
    function river_throttle_create_c(rate, burst, out) &
        bind(C, name='river_throttle_create')
      import :: c_int, c_ptr, c_double
      real(c_double), value :: rate, burst
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_throttle_create_c
    end function river_throttle_create_c
    subroutine river_throttle_destroy_c(t) &
        bind(C, name='river_throttle_destroy')
      import :: c_ptr
      type(c_ptr), value :: t
    end subroutine river_throttle_destroy_c
    function river_throttle_consume_c(t, bytes) &
        bind(C, name='river_throttle_consume')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: t
      integer(c_size_t), value :: bytes
      integer(c_int) :: river_throttle_consume_c
    end function river_throttle_consume_c
    function river_throttle_set_factor_c(t, factor) &
        bind(C, name='river_throttle_set_factor')
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: t
      real(c_double), value :: factor
      integer(c_int) :: river_throttle_set_factor_c
    end function river_throttle_set_factor_c
    function river_throttle_rate_c(t, rate) bind(C, name='river_throttle_rate')
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: t
      real(c_double), intent(out) :: rate
      integer(c_int) :: river_throttle_rate_c
    end function river_throttle_rate_c
    function river_throttle_slept_c(t, seconds) &
        bind(C, name='river_throttle_slept')
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: t
      real(c_double), intent(out) :: seconds
      integer(c_int) :: river_throttle_slept_c
    end function river_throttle_slept_c
    function river_perturb_parse_c(spec, out) bind(C, name='river_perturb_parse')
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: spec(*)
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_perturb_parse_c
    end function river_perturb_parse_c
    subroutine river_perturb_destroy_c(p) bind(C, name='river_perturb_destroy')
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine river_perturb_destroy_c
    function river_perturb_factor_c(p, kind, index, t, factor) &
        bind(C, name='river_perturb_factor')
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: p
      integer(c_int), value :: kind, index
      real(c_double), value :: t
      real(c_double), intent(out) :: factor
      integer(c_int) :: river_perturb_factor_c
    end function river_perturb_factor_c
    function river_perturb_count_c(p, kind, k) bind(C, name='river_perturb_count')
      import :: c_int, c_ptr
      type(c_ptr), value :: p
      integer(c_int), value :: kind
      integer(c_int), intent(out) :: k
      integer(c_int) :: river_perturb_count_c
    end function river_perturb_count_c
    function river_perturb_max_index_c(p, kind, max) &
        bind(C, name='river_perturb_max_index')
      import :: c_int, c_ptr
      type(c_ptr), value :: p
      integer(c_int), value :: kind
      integer(c_int), intent(out) :: max
      integer(c_int) :: river_perturb_max_index_c
    end function river_perturb_max_index_c
    function river_cpu_hog_start_c(fraction, out) &
        bind(C, name='river_cpu_hog_start')
      import :: c_int, c_ptr, c_double
      real(c_double), value :: fraction
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_cpu_hog_start_c
    end function river_cpu_hog_start_c
    function river_cpu_hog_stop_c(h) bind(C, name='river_cpu_hog_stop')
      import :: c_int, c_ptr
      type(c_ptr), value :: h
      integer(c_int) :: river_cpu_hog_stop_c
    end function river_cpu_hog_stop_c
  end interface

contains

  module procedure river_throttle_create
    real(c_double) :: b
    type(c_ptr) :: out
    integer(c_int) :: rc
    b = 0.0_c_double
    if (present(burst)) b = burst
    out = c_null_ptr
    rc = river_throttle_create_c(rate, b, out)
    if (rc == RIVER_SUCCESS) t%ptr = out
    call river_check(rc, 'river_throttle_create', ierr)
  end procedure river_throttle_create

  module procedure river_throttle_destroy
    call river_throttle_destroy_c(t%ptr)
    t%ptr = c_null_ptr
  end procedure river_throttle_destroy

  module procedure river_throttle_consume
    call river_check(river_throttle_consume_c(t%ptr, bytes), &
                     'river_throttle_consume', ierr)
  end procedure river_throttle_consume

  module procedure river_throttle_set_factor
    call river_check(river_throttle_set_factor_c(t%ptr, factor), &
                     'river_throttle_set_factor', ierr)
  end procedure river_throttle_set_factor

  module procedure river_throttle_rate
    real(c_double) :: r
    integer(c_int) :: rc
    rc = river_throttle_rate_c(t%ptr, r)
    if (rc == RIVER_SUCCESS) rate = r
    call river_check(rc, 'river_throttle_rate', ierr)
  end procedure river_throttle_rate

  module procedure river_throttle_slept
    real(c_double) :: s
    integer(c_int) :: rc
    rc = river_throttle_slept_c(t%ptr, s)
    if (rc == RIVER_SUCCESS) seconds = s
    call river_check(rc, 'river_throttle_slept', ierr)
  end procedure river_throttle_slept

  module procedure river_perturb_parse
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_perturb_parse_c(c_str(spec), out)
    if (rc == RIVER_SUCCESS) p%ptr = out
    call river_check(rc, 'river_perturb_parse', ierr)
  end procedure river_perturb_parse

  module procedure river_perturb_destroy
    call river_perturb_destroy_c(p%ptr)
    p%ptr = c_null_ptr
  end procedure river_perturb_destroy

  module procedure river_perturb_factor
    real(c_double) :: f
    integer(c_int) :: rc
    rc = river_perturb_factor_c(p%ptr, int(kind, c_int), int(index, c_int), &
                                t, f)
    if (rc == RIVER_SUCCESS) factor = f
    call river_check(rc, 'river_perturb_factor', ierr)
  end procedure river_perturb_factor

  module procedure river_perturb_count
    integer(c_int) :: n, rc
    rc = river_perturb_count_c(p%ptr, int(kind, c_int), n)
    if (rc == RIVER_SUCCESS) k = int(n)
    call river_check(rc, 'river_perturb_count', ierr)
  end procedure river_perturb_count

  module procedure river_perturb_max_index
    integer(c_int) :: m, rc
    rc = river_perturb_max_index_c(p%ptr, int(kind, c_int), m)
    if (rc == RIVER_SUCCESS) max_index = int(m)
    call river_check(rc, 'river_perturb_max_index', ierr)
  end procedure river_perturb_max_index

  module procedure river_cpu_hog_start
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_cpu_hog_start_c(fraction, out)
    if (rc == RIVER_SUCCESS) h%ptr = out
    call river_check(rc, 'river_cpu_hog_start', ierr)
  end procedure river_cpu_hog_start

  module procedure river_cpu_hog_stop
    integer(c_int) :: rc
    rc = river_cpu_hog_stop_c(h%ptr)
    h%ptr = c_null_ptr
    call river_check(rc, 'river_cpu_hog_stop', ierr)
  end procedure river_cpu_hog_stop

end submodule river_emul_impl
