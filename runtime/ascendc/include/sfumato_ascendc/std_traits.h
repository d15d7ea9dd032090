// AscendC::Std's type traits (the reference's utilities mirror the standard library's): the standard
// library's own, by name.
#pragma once
#include <type_traits>
#include <utility>

namespace AscendC::Std {
#define SFUMATO_STD_TRAIT(name) using std::name;
#define SFUMATO_STD_TRAIT_V(name) \
    using std::name;              \
    using std::name##_v;
#define SFUMATO_STD_TRAIT_T(name) \
    using std::name;              \
    using std::name##_t;
SFUMATO_STD_TRAIT_V(is_same)
SFUMATO_STD_TRAIT_V(is_void)
SFUMATO_STD_TRAIT_V(is_integral)
SFUMATO_STD_TRAIT_V(is_floating_point)
SFUMATO_STD_TRAIT_V(is_arithmetic)
SFUMATO_STD_TRAIT_V(is_signed)
SFUMATO_STD_TRAIT_V(is_unsigned)
SFUMATO_STD_TRAIT_V(is_pointer)
SFUMATO_STD_TRAIT_V(is_reference)
SFUMATO_STD_TRAIT_V(is_lvalue_reference)
SFUMATO_STD_TRAIT_V(is_rvalue_reference)
SFUMATO_STD_TRAIT_V(is_array)
SFUMATO_STD_TRAIT_V(is_const)
SFUMATO_STD_TRAIT_V(is_volatile)
SFUMATO_STD_TRAIT_V(is_class)
SFUMATO_STD_TRAIT_V(is_enum)
SFUMATO_STD_TRAIT_V(is_function)
SFUMATO_STD_TRAIT_V(is_base_of)
SFUMATO_STD_TRAIT_V(is_convertible)
SFUMATO_STD_TRAIT_V(is_constructible)
SFUMATO_STD_TRAIT_V(is_trivially_copyable)
SFUMATO_STD_TRAIT_T(remove_cv)
SFUMATO_STD_TRAIT_T(remove_const)
SFUMATO_STD_TRAIT_T(remove_volatile)
SFUMATO_STD_TRAIT_T(remove_pointer)
SFUMATO_STD_TRAIT_T(remove_reference)
SFUMATO_STD_TRAIT_T(remove_extent)
SFUMATO_STD_TRAIT_T(remove_all_extents)
#if __cplusplus >= 202002L
SFUMATO_STD_TRAIT_T(remove_cvref)
#else  // a C++17 unit (sfumato-asc's per-core-kind units): the trait itself
template <class T>
struct remove_cvref {
    using type = std::remove_cv_t<std::remove_reference_t<T>>;
};
template <class T>
using remove_cvref_t = typename remove_cvref<T>::type;
#endif
SFUMATO_STD_TRAIT_T(add_cv)
SFUMATO_STD_TRAIT_T(add_const)
SFUMATO_STD_TRAIT_T(add_volatile)
SFUMATO_STD_TRAIT_T(add_pointer)
SFUMATO_STD_TRAIT_T(add_lvalue_reference)
SFUMATO_STD_TRAIT_T(add_rvalue_reference)
SFUMATO_STD_TRAIT_T(decay)
SFUMATO_STD_TRAIT_T(conditional)
SFUMATO_STD_TRAIT_T(enable_if)
SFUMATO_STD_TRAIT_T(make_signed)
SFUMATO_STD_TRAIT_T(make_unsigned)
SFUMATO_STD_TRAIT_T(underlying_type)
SFUMATO_STD_TRAIT_T(common_type)
SFUMATO_STD_TRAIT(integral_constant)
SFUMATO_STD_TRAIT(bool_constant)
SFUMATO_STD_TRAIT(true_type)
SFUMATO_STD_TRAIT(false_type)
SFUMATO_STD_TRAIT(declval)
SFUMATO_STD_TRAIT(move)
SFUMATO_STD_TRAIT(forward)
#undef SFUMATO_STD_TRAIT
#undef SFUMATO_STD_TRAIT_V
#undef SFUMATO_STD_TRAIT_T
}  // namespace AscendC::Std
